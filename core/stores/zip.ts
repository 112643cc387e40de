import { PassThrough, type Readable } from 'node:stream';
import yazl from 'yazl';
import type { BlobStat, BlobStore } from './blob-store';

/**
 * ZIPs of stored blobs: job archives (the API) and the archives jobs write themselves (a session's `create_archive`).
 */

export interface ArchiveEntry {
  /** Path inside the ZIP. */
  name: string;
  blob: BlobStat;
}

/**
 * A streamed ZIP: each blob is opened only when the ZIP writer reaches it, so memory stays flat however large the
 * archive. `manifest` is added as `manifest.json` with every entry's size and sha256.
 */
export function zipStream(store: BlobStore, entries: ArchiveEntry[], manifest: Record<string, unknown>): Readable {
  const zip = new yazl.ZipFile();
  const files = entries.map((e) => ({ name: e.name, size: e.blob.size, sha256: e.blob.sha256, mime: e.blob.mime }));
  zip.addBuffer(Buffer.from(JSON.stringify({ ...manifest, files }, null, 2)), 'manifest.json', { compress: true });
  for (const e of entries) {
    const compress = !/^(image|video|audio)\/|zip|pdf/.test(e.blob.mime);
    zip.addReadStreamLazy(e.name, { size: e.blob.size, compress }, (cb) => {
      store.get(e.blob.key).then(
        (s) => cb(null, s),
        (err: Error) => cb(err, undefined as unknown as Readable),
      );
    });
  }
  zip.end();
  const out = new PassThrough();
  zip.outputStream.on('error', (err) => out.destroy(err));
  return zip.outputStream.pipe(out);
}
