import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';

/** A pass-through stream that counts bytes and hashes them as they flow. */
export class HashingStream extends Transform {
  private readonly hash = createHash('sha256');
  size = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null, d?: Buffer) => void): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    cb(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

export function toReadable(body: Readable | Buffer | string): Readable {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Readable.from([Buffer.from(body)]);
  return body;
}
