import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * The sha256 of a file, hex, as the blob store computes it when the file is stored: the input hash of the result
 * cache's keys (core/stores/cache-keys.ts), so the API can look an upload up before storing it. Streamed, never whole in memory.
 */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
