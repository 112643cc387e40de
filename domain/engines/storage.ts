/**
 * The blob store behind one interface (local directory, S3/MinIO: providers/storage). The interface stays where core's
 * helpers over it (`readBlobJson`, `cachedJsonReader`, ...) and the workflows' blob references read it,
 * core/stores/blob-store.ts, since core imports nothing of domain/; it is named here with the other engines.
 */
export type { BlobRef, BlobStat, BlobStore, PutOptions } from '../../core/stores/blob-store';
