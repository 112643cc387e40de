import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { BlobNotFoundError, type BlobStore } from '../../core/blob-store';
import { LocalBlobStore, S3BlobStore } from '../../providers/storage';
import { sharedMinioServer, tempDir } from '../support/servers';

const MB = 1024 * 1024;

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** Reads a stream through a hash, never holding it whole. */
async function digestStream(s: Readable): Promise<{ sha256: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const c of s) {
    const b = c as Buffer;
    h.update(b);
    size += b.length;
  }
  return { sha256: h.digest('hex'), size };
}

async function readAll(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `total` bytes generated chunk by chunk; `expected()` gives its sha256 once it has been consumed. */
function generatedStream(total: number, chunkSize = 64 * 1024): { stream: Readable; expected: () => { sha256: string; size: number } } {
  const h = createHash('sha256');
  let produced = 0;
  const seed = randomBytes(chunkSize);
  const stream = new Readable({
    read() {
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
function failingStream(okBytes: number, chunkSize = 64 * 1024): Readable {
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

/**
 * A full GC on demand, without a command-line flag: samples then measure what is retained, not garbage that a
 * streaming implementation produces faster than the collector runs.
 */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * Samples memory while `fn` runs. `retainedGrowth` is the peak of heapUsed + arrayBuffers (Buffers live outside
 * the V8 heap) over the baseline, each sample taken after a full GC; `rssGrowth` is informative only.
 */
async function peakMemoryGrowth<T>(fn: () => Promise<T>): Promise<{ result: T; retainedGrowth: number; rssGrowth: number }> {
  gc();
  const base = process.memoryUsage();
  const baseRetained = base.heapUsed + base.arrayBuffers;
  let peakRetained = baseRetained;
  let peakRss = base.rss;
  const sample = () => {
    gc();
    const m = process.memoryUsage();
    peakRetained = Math.max(peakRetained, m.heapUsed + m.arrayBuffers);
    peakRss = Math.max(peakRss, m.rss);
  };
  const timer = setInterval(sample, 100);
  try {
    const result = await fn();
    return { result, retainedGrowth: peakRetained - baseRetained, rssGrowth: peakRss - base.rss };
  } finally {
    clearInterval(timer);
  }
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Backend {
  store: BlobStore;
  /** Local only: the store's root directory. */
  root?: string;
  /** Incomplete writes the backend still holds for a key (temp files, multipart uploads). */
  leftovers(key: string): Promise<string[]>;
}

/** The BlobStore contract, written once and run against every backend. */
function blobStoreContract(name: string, setup: () => Promise<Backend>): void {
  describe(`BlobStore contract: ${name}`, function () {
    this.timeout(120_000);
    let b: Backend;
    let store: BlobStore;

    before(async function () {
      b = await setup();
      store = b.store;
    });

    it('check() resolves', async () => {
      await store.check();
    });

    it('put from a Buffer returns key, sha256, size and mime', async () => {
      const data = randomBytes(12_345);
      const ref = await store.put('put/buffer.bin', data, { mime: 'application/pdf' });
      expect(ref).to.deep.equal({ key: 'put/buffer.bin', sha256: sha256(data), size: data.length, mime: 'application/pdf' });
    });

    it('put from a string stores its UTF-8 bytes and defaults the mime', async () => {
      const text = 'héllo wörld — ✓\n';
      const ref = await store.put('put/string.txt', text);
      expect(ref).to.deep.equal({
        key: 'put/string.txt',
        sha256: sha256(Buffer.from(text, 'utf8')),
        size: Buffer.byteLength(text, 'utf8'),
        mime: 'application/octet-stream',
      });
      expect((await readAll(await store.get('put/string.txt'))).toString('utf8')).to.equal(text);
    });

    it('put from a Readable stream returns the hash and size of the bytes', async () => {
      const parts = [randomBytes(1000), randomBytes(70_000), randomBytes(3)];
      const whole = Buffer.concat(parts);
      const ref = await store.put('put/stream.bin', Readable.from(parts), { mime: 'image/png' });
      expect(ref).to.deep.equal({ key: 'put/stream.bin', sha256: sha256(whole), size: whole.length, mime: 'image/png' });
    });

    it('put of an empty body round-trips', async () => {
      const ref = await store.put('put/empty.bin', Buffer.alloc(0));
      expect(ref.size).to.equal(0);
      expect(ref.sha256).to.equal(sha256(''));
      const st = await store.stat('put/empty.bin');
      expect(st).to.include({ size: 0, sha256: sha256('') });
      expect(await digestStream(await store.get('put/empty.bin'))).to.deep.equal({ sha256: sha256(''), size: 0 });
    });

    it('get streams back identical bytes', async () => {
      const data = randomBytes(300_000);
      await store.put('get/data.bin', data);
      const s = await store.get('get/data.bin');
      expect(s).to.be.instanceOf(Readable);
      expect(await digestStream(s)).to.deep.equal({ sha256: sha256(data), size: data.length });
    });

    it('stat returns size, sha256, mime and modifiedAt', async () => {
      const before = Date.now();
      const data = Buffer.from('{"a":1}');
      await store.put('stat/x.json', data, { mime: 'application/json' });
      const st = await store.stat('stat/x.json');
      expect(st).to.not.equal(null);
      expect(st).to.include({ key: 'stat/x.json', size: data.length, sha256: sha256(data), mime: 'application/json' });
      expect(st!.modifiedAt).to.be.a('string');
      const t = Date.parse(st!.modifiedAt);
      expect(new Date(t).toISOString()).to.equal(st!.modifiedAt);
      // S3 timestamps have second precision.
      expect(t).to.be.within(before - 5000, Date.now() + 5000);
    });

    it('stat returns null for an absent key, and for a key that is only a prefix of others', async () => {
      expect(await store.stat('stat/absent')).to.equal(null);
      await store.put('dirlike/child/leaf.txt', 'x');
      expect(await store.stat('dirlike')).to.equal(null);
      expect(await store.stat('dirlike/child')).to.equal(null);
    });

    it('get of an absent key rejects with BlobNotFoundError', async () => {
      for (const key of ['get/absent', 'dirlike/child']) {
        await store.put('dirlike/child/leaf.txt', 'x');
        const err = await store.get(key).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, key).to.be.instanceOf(BlobNotFoundError);
        expect((err as BlobNotFoundError).key).to.equal(key);
      }
    });

    it('overwrite replaces the content (stat shows the new sha256)', async () => {
      const a = randomBytes(5000);
      const c = randomBytes(7000);
      await store.put('over/k.bin', a, { mime: 'text/plain' });
      const ref = await store.put('over/k.bin', c, { mime: 'application/pdf' });
      expect(ref.sha256).to.equal(sha256(c));
      const st = await store.stat('over/k.bin');
      expect(st).to.include({ sha256: sha256(c), size: c.length, mime: 'application/pdf' });
      expect(await digestStream(await store.get('over/k.bin'))).to.deep.equal({ sha256: sha256(c), size: c.length });
      expect((await store.list('over/')).map((s) => s.key)).to.deep.equal(['over/k.bin']);
    });

    it('a reader never sees a partial object while an overwrite streams in', async () => {
      const old = randomBytes(100_000);
      await store.put('over/atomic.bin', old);
      const gen = generatedStream(6 * MB);
      const writing = store.put('over/atomic.bin', gen.stream);
      const seen: string[] = [];
      let done = false;
      void writing.finally(() => (done = true)).catch(() => undefined);
      while (!done) {
        seen.push((await digestStream(await store.get('over/atomic.bin'))).sha256);
      }
      const ref = await writing;
      const expected = gen.expected();
      expect(ref.sha256).to.equal(expected.sha256);
      for (const s of seen) expect([sha256(old), expected.sha256]).to.include(s);
      expect((await store.stat('over/atomic.bin'))!.sha256).to.equal(expected.sha256);
    });

    it('list(prefix) returns exactly the keys under the prefix, in key order', async () => {
      const keys = ['jobs/a/3.txt', 'jobs/a/1.txt', 'jobs/a/sub/2.txt', 'jobs/ab/1.txt', 'jobs/b/1.txt', 'jobs/a.txt', 'jobsx/1.txt'];
      for (const k of keys) await store.put(k, `content of ${k}`, { mime: 'text/plain' });

      const underA = await store.list('jobs/a/');
      expect(underA.map((s) => s.key)).to.deep.equal(['jobs/a/1.txt', 'jobs/a/3.txt', 'jobs/a/sub/2.txt']);
      for (const s of underA) {
        const body = Buffer.from(`content of ${s.key}`);
        expect(s).to.include({ size: body.length, sha256: sha256(body), mime: 'text/plain' });
        expect(Date.parse(s.modifiedAt)).to.be.a('number').and.not.NaN;
      }
      expect((await store.list('jobs/ab/')).map((s) => s.key)).to.deep.equal(['jobs/ab/1.txt']);
      // A prefix is a string prefix, not only a directory.
      expect((await store.list('jobs/a')).map((s) => s.key)).to.deep.equal([
        'jobs/a.txt',
        'jobs/a/1.txt',
        'jobs/a/3.txt',
        'jobs/a/sub/2.txt',
        'jobs/ab/1.txt',
      ]);
      expect((await store.list('jobs/')).map((s) => s.key)).to.deep.equal([...keys.filter((k) => k.startsWith('jobs/'))].sort());
      expect(await store.list('nothing/here/')).to.deep.equal([]);
    });

    it('list never returns internal objects (metadata, temp files)', async () => {
      await store.put('internal/a.bin', 'a');
      // A failed put may leave temp state behind in a naive store: it must not be listed either.
      await store.put('internal/b.bin', failingStream(10_000)).catch(() => undefined);
      const all = (await store.list('')).map((s) => s.key);
      expect(all).to.include('internal/a.bin');
      expect(all).to.not.include('internal/b.bin');
      for (const k of all) {
        expect(k, k).to.not.match(/^_meta\//);
        expect(k, k).to.not.match(/^(tmp|meta|objects)\//);
        expect(k, k).to.not.match(/\.meta$/);
        expect(await store.stat(k), k).to.not.equal(null);
      }
      if (b.root) {
        // Keys that exist only as metadata or temp files on disk are not objects.
        for (const k of all) expect(fs.existsSync(path.join(b.root, 'objects', ...k.split('/'))), k).to.equal(true);
      }
      expect(all).to.deep.equal([...all].sort());
    });

    it('delete removes the object; deleting an absent key is fine', async () => {
      await store.put('del/x.bin', 'bye');
      await store.delete('del/x.bin');
      expect(await store.stat('del/x.bin')).to.equal(null);
      expect((await store.list('del/')).map((s) => s.key)).to.deep.equal([]);
      await store.get('del/x.bin').then(
        () => expect.fail('get after delete resolved'),
        (e: unknown) => expect(e).to.be.instanceOf(BlobNotFoundError),
      );
      await store.delete('del/x.bin');
      await store.delete('del/never-existed');
      // A key put again after delete is a fresh object.
      const ref = await store.put('del/x.bin', 'again');
      expect((await store.stat('del/x.bin'))!.sha256).to.equal(ref.sha256);
    });

    it('rejects invalid keys on every operation', async () => {
      const bad = ['../x', '/abs', 'a//b', 'a/./b', '', 'a\\b', 'a/../b', '..', 'a/', 'a b', 'x\0y'];
      for (const key of bad) {
        const label = JSON.stringify(key);
        await store.put(key, 'x').then(
          () => expect.fail(`put ${label} resolved`),
          (e: Error) => expect(e.message, label).to.match(/invalid blob key/),
        );
        for (const op of [() => store.get(key), () => store.stat(key), () => store.delete(key)]) {
          await op().then(
            () => expect.fail(`operation on ${label} resolved`),
            (e: Error) => {
              expect(e, label).to.not.be.instanceOf(BlobNotFoundError);
              expect(e.message, label).to.match(/invalid blob key/);
            },
          );
        }
      }
      for (const prefix of ['../', '/abs/', 'a//']) {
        await store.list(prefix).then(
          () => expect.fail(`list ${prefix} resolved`),
          (e: Error) => expect(e.message).to.match(/invalid blob key/),
        );
      }
      if (b.root) expect(fs.existsSync(path.join(path.dirname(b.root), 'x'))).to.equal(false);
    });

    it('an 80 MB streamed put round-trips without buffering the whole stream', async function () {
      // 80 MB through a 40 MB bound: a buffering store fails by a wide margin; GC noise of a long suite does not.
      const total = 80 * MB;
      const gen = generatedStream(total);
      const put = await peakMemoryGrowth(() => store.put('big/forty.bin', gen.stream, { mime: 'application/octet-stream' }));
      const expected = gen.expected();
      expect(expected.size).to.equal(total);
      expect(put.result).to.include({ key: 'big/forty.bin', sha256: expected.sha256, size: total });
      const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
      expect(put.retainedGrowth, `memory retained during put: ${mb(put.retainedGrowth)} (rss +${mb(put.rssGrowth)})`).to.be.below(40 * MB);

      const st = await store.stat('big/forty.bin');
      expect(st).to.include({ size: total, sha256: expected.sha256 });

      const got = await peakMemoryGrowth(async () => digestStream(await store.get('big/forty.bin')));
      expect(got.result).to.deep.equal({ sha256: expected.sha256, size: total });
      expect(got.retainedGrowth, `memory retained during get: ${mb(got.retainedGrowth)} (rss +${mb(got.rssGrowth)})`).to.be.below(40 * MB);
      await store.delete('big/forty.bin');
    });

    it('presign: null for a local store, a downloadable URL for S3', async () => {
      const data = randomBytes(50_000);
      await store.put('presign/file.bin', data);
      const url = await store.presign('presign/file.bin', 60);
      if (store.kind === 'local') {
        expect(url).to.equal(null);
        return;
      }
      expect(url).to.be.a('string');
      expect(new URL(url!).hostname).to.equal('127.0.0.1');
      const res = await fetch(url!);
      expect(res.status).to.equal(200);
      const body = Buffer.from(await res.arrayBuffer());
      expect(sha256(body)).to.equal(sha256(data));
      expect(body.length).to.equal(data.length);
    });

    it('a put whose source fails midway leaves no object and no temp state', async () => {
      for (const [key, okBytes] of [
        ['fail/small.bin', 200_000],
        ['fail/large.bin', 12 * MB],
      ] as const) {
        const err = await store.put(key, failingStream(okBytes)).then(
          () => null,
          (e: Error) => e,
        );
        expect(err, key).to.be.instanceOf(Error);
        expect(err!.message).to.match(/source failed midway/);
        expect(await store.stat(key)).to.equal(null);
        expect((await store.list('fail/')).map((s) => s.key)).to.not.include(key);
        const clean = await waitFor(async () => (await b.leftovers(key)).length === 0);
        expect(clean, `leftovers: ${(await b.leftovers(key)).join(', ')}`).to.equal(true);
      }
      // A failed put does not break the next write to the same key, nor leave a stale object over it.
      await store.put('fail/prev.bin', 'previous');
      await store.put('fail/prev.bin', failingStream(100_000)).catch(() => undefined);
      expect((await readAll(await store.get('fail/prev.bin'))).toString()).to.equal('previous');
      const gen = generatedStream(11 * MB);
      const ref = await store.put('fail/large.bin', gen.stream);
      expect(ref.sha256).to.equal(gen.expected().sha256);
      expect((await digestStream(await store.get('fail/large.bin'))).sha256).to.equal(ref.sha256);
    });

    it('concurrent puts to different keys all land', async () => {
      const items = Array.from({ length: 24 }, (_, i) => ({ key: `conc/${String(i).padStart(2, '0')}.bin`, data: randomBytes(1000 + i * 997) }));
      const refs = await Promise.all(
        items.map((it, i) => store.put(it.key, i % 2 ? it.data : Readable.from([it.data.subarray(0, 500), it.data.subarray(500)]))),
      );
      refs.forEach((r, i) => expect(r).to.include({ key: items[i]!.key, sha256: sha256(items[i]!.data), size: items[i]!.data.length }));
      const listed = await store.list('conc/');
      expect(listed.map((s) => s.key)).to.deep.equal(items.map((i) => i.key));
      for (const it of items) {
        expect((await digestStream(await store.get(it.key))).sha256).to.equal(sha256(it.data));
      }
    });

    if (name === 'local') {
      it('local: objects, metadata and temp files live under root/objects, root/meta and root/tmp', async () => {
        await store.put('layout/a/b.txt', 'hello');
        expect(fs.readFileSync(path.join(b.root!, 'objects', 'layout', 'a', 'b.txt'), 'utf8')).to.equal('hello');
        expect(fs.existsSync(path.join(b.root!, 'meta', 'layout', 'a', 'b.txt.json'))).to.equal(true);
        expect(fs.readdirSync(path.join(b.root!, 'tmp'))).to.deep.equal([]);
      });
    }
  });
}

blobStoreContract('local', async () => {
  const root = path.join(tempDir('docproc-blobs-'), 'blobs');
  const store = await new LocalBlobStore(root).init();
  return {
    store,
    root,
    leftovers: async () => fs.readdirSync(path.join(root, 'tmp')),
  };
});

blobStoreContract('s3', async () => {
  const minio = await sharedMinioServer();
  const bucket = `docproc-test-${randomBytes(6).toString('hex')}`;
  const store = await new S3BlobStore({ endpoint: minio.endpoint, accessKey: minio.accessKey, secretKey: minio.secretKey, bucket }).init();
  expect(await store.client.bucketExists(bucket)).to.equal(true);
  return {
    store,
    leftovers: async (key: string) => {
      const found: string[] = [];
      const s = store.client.listIncompleteUploads(bucket, key, true);
      for await (const u of s as AsyncIterable<{ key: string; uploadId: string }>) {
        if (u.key === key) found.push(`multipart upload ${u.uploadId} of ${u.key}`);
      }
      return found;
    },
  };
});
