/**
 * A process that writes one blob into the local store at BLOB_ROOT and never finishes it: a stream that sends a
 * chunk every 50 ms. For the test of what a writer killed mid-write leaves behind (local-store-crash.test.ts).
 */
import { Readable } from 'node:stream';
import { LocalBlobStore } from '../../../providers/storage';

const store = await new LocalBlobStore(process.env.BLOB_ROOT!).init();
const body = new Readable({ read() {} });
const timer = setInterval(() => body.push(Buffer.alloc(64 * 1024, 7)), 50);
process.stdout.write('writing\n');
await store.put('jobs/killed/out/result.bin', body).finally(() => clearInterval(timer));
