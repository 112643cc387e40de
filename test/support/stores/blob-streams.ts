import { createHash, randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../../core/stores/blob-store';

export const MB = 1024 * 1024;

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/**
 * Reads a stream through a hash, never holding it whole. `onChunk` sees each chunk as it arrives (while it is still
 * held), with the count of the bytes before it.
 */
export async function digestStream(
  s: Readable,
  onChunk?: (bytesBefore: number) => void,
): Promise<{ sha256: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const c of s) {
    const b = c as Buffer;
    onChunk?.(size);
    h.update(b);
    size += b.length;
  }
  return { sha256: h.digest('hex'), size };
}

export async function readAll(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A stream of `total` bytes generated chunk by chunk; `expected()` gives its sha256 once it has been consumed.
 * `onPull(produced, ended)` runs each time the consumer asks for more, before the next chunk is made.
 */
export function generatedStream(
  total: number,
  opts: { chunkSize?: number; onPull?: (produced: number, ended: boolean) => void } = {},
): { stream: Readable; expected: () => { sha256: string; size: number } } {
  const chunkSize = opts.chunkSize ?? 64 * 1024;
  const h = createHash('sha256');
  let produced = 0;
  const seed = randomBytes(chunkSize);
  const stream = new Readable({
    read() {
      opts.onPull?.(produced, produced >= total);
      if (produced >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(chunkSize, total - produced);
      const chunk = Buffer.allocUnsafe(n);
      seed.copy(chunk, 0, 0, n);
      // Vary every chunk so that no two parts of the stream are identical.
      chunk.writeUInt32BE(produced / chunkSize, 0);
      h.update(chunk);
      produced += n;
      this.push(chunk);
    },
  });
  return { stream, expected: () => ({ sha256: h.digest('hex'), size: produced }) };
}

/** A source that yields `okBytes` bytes and then fails. */
export function failingStream(okBytes: number, chunkSize = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= okBytes) {
        setImmediate(() => this.destroy(new Error('source failed midway')));
        return;
      }
      const n = Math.min(chunkSize, okBytes - sent);
      sent += n;
      this.push(randomBytes(n));
    },
  });
}

/** A full GC on demand, without a command-line flag. */
v8.setFlagsFromString('--expose-gc');
v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * Memory retained while bytes flow, sampled after a full GC (so garbage a streaming store makes faster than the
 * collector runs does not count) at points set by progress, not by the clock: at the first byte, every `every`
 * bytes, and when the source ends. A store that buffers the whole stream holds all of it when the source ends (a
 * put) or before the first byte comes out (a get), so those samples catch it; the GC cost is about ten collections
 * per 80 MB, whatever the machine's load. `retained` is heapUsed + arrayBuffers (Buffers live outside the V8 heap)
 * over the baseline; `rss` is informative only.
 */
export class RetainedMemoryProbe {
  private readonly baseRetained: number;
  private readonly baseRss: number;
  private peakRetained: number;
  private peakRss: number;
  private next = 0;
  samples = 0;

  constructor(private readonly every = 8 * MB) {
    gc();
    const m = process.memoryUsage();
    this.baseRetained = this.peakRetained = m.heapUsed + m.arrayBuffers;
    this.baseRss = this.peakRss = m.rss;
  }

  /** Reports the bytes that have flowed so far; samples when they pass the next mark, or at the end. */
  progress(bytes: number, ended = false): void {
    if (bytes < this.next && !ended) return;
    this.next = bytes + this.every;
    gc();
    const m = process.memoryUsage();
    this.peakRetained = Math.max(this.peakRetained, m.heapUsed + m.arrayBuffers);
    this.peakRss = Math.max(this.peakRss, m.rss);
    this.samples++;
  }

  get retainedGrowth(): number {
    return this.peakRetained - this.baseRetained;
  }

  describe(): string {
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    return `retained +${mb(this.retainedGrowth)}, rss +${mb(this.peakRss - this.baseRss)}, ${this.samples} samples`;
  }
}

/**
 * The store with every operation it was asked for tracked, so that a test's cleanup can end what a failed or
 * timed-out test left running (mocha does not stop a test's promises): `settle` destroys the streams that went in
 * or came out, which makes an unfinished put fail and remove its temp state, then waits for the operations to end.
 */
export function trackOperations<S extends BlobStore>(store: S): { store: S; settle(maxMs: number): Promise<boolean> } {
  const pending = new Set<Promise<unknown>>();
  const streams = new Set<Readable>();
  const keep = (v: unknown) => {
    if (v instanceof Readable) streams.add(v);
  };
  const tracked = new Proxy(store, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        args.forEach(keep);
        const r: unknown = v.apply(target, args);
        if (!(r instanceof Promise)) return r;
        const p = r.then((x: unknown) => (keep(x), x));
        pending.add(p);
        void p.then(
          () => pending.delete(p),
          () => pending.delete(p),
        );
        return p;
      };
    },
  });
  return {
    store: tracked,
    async settle(maxMs) {
      for (const s of streams) {
        if (s.destroyed) continue;
        s.on('error', () => undefined);
        s.destroy(new Error('the test ended'));
      }
      streams.clear();
      let timer: NodeJS.Timeout | undefined;
      const all = Promise.allSettled([...pending]).then(() => true);
      const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), maxMs)));
      const done = await Promise.race([all, late]);
      clearTimeout(timer);
      return done;
    },
  };
}
