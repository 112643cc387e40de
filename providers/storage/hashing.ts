import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';

/** A pass-through stream that counts bytes and hashes them as they flow (unless their hash is known already). */
export class HashingStream extends Transform {
  private readonly hash;
  size = 0;
  constructor(private readonly known?: string) {
    super();
    this.hash = known === undefined ? createHash('sha256') : undefined;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null, d?: Buffer) => void): void {
    this.hash?.update(chunk);
    this.size += chunk.length;
    cb(null, chunk);
  }
  digest(): string {
    return this.known ?? this.hash!.digest('hex');
  }
}

export function toReadable(body: Readable | Buffer | string): Readable {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Readable.from([Buffer.from(body)]);
  return body;
}
