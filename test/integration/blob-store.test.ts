import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect } from 'chai';
import { BlobNotFoundError, type BlobStore } from '../../core/stores/blob-store';
import { localBackend, s3Backend, type Backend } from '../support/stores/blob-backends';
import {
  digestStream,
  failingStream,
  generatedStream,
  MB,
  readAll,
  RetainedMemoryProbe,
  sha256,
  trackOperations,
} from '../support/stores/blob-streams';
import { waitFor } from '../support/wait';

/**
 * The BlobStore contract, written once and run against every backend. Each test gets a store of its own (a fresh
 * directory or bucket), and its cleanup ends what the test left running and removes the store even when the test
 * failed or timed out: one fault never fails the next test.
 */
function blobStoreContract(name: string, setup: () => Promise<Backend>): void {
  describe(`BlobStore contract: ${name}`, function () {
    this.timeout(120_000);
    let b: Backend;
    let store: BlobStore;
    let settle: (maxMs: number) => Promise<boolean>;

    beforeEach(async function () {
      b = await setup();
      ({ store, settle } = trackOperations(b.store));
    });

    afterEach(async function () {
      // A hook that throws would skip the rest of the suite, so cleanup problems are reported, never thrown.
      const warn = (msg: string) => process.stderr.write(`cleanup after "${this.currentTest?.fullTitle()}": ${msg}\n`);
      if (!(await settle(30_000))) warn('store operations still running after 30 s');
      await b.dispose().catch((e: Error) => warn(e.message));
    });

    it('check() resolves', async () => {
      await store.check();
    });

    it('put from a Buffer returns key, sha256, size and mime', async () => {
      const data = randomBytes(12_345);
      const ref = await store.put('put/buffer.bin', data, { mime: 'application/pdf' });
      expect(ref).to.deep.equal({
        key: 'put/buffer.bin',
        sha256: sha256(data),
        size: data.length,
        mime: 'application/pdf',
      });
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
      expect(ref).to.deep.equal({
        key: 'put/stream.bin',
        sha256: sha256(whole),
        size: whole.length,
        mime: 'image/png',
      });
    });

    it('put with the sha256 its caller computed records that hash, streamed or in memory', async () => {
      const bytes = randomBytes(70_000);
      const known = sha256(bytes);
      const streamed = await store.put('put/known.bin', Readable.from([bytes]), { sha256: known });
      expect(streamed).to.include({ sha256: known, size: bytes.length });
      expect((await store.stat('put/known.bin'))?.sha256).to.equal(known);
      const inMemory = await store.put('put/known-buffer.bin', bytes, { sha256: known });
      expect(inMemory).to.include({ sha256: known, size: bytes.length });
      expect(await readAll(await store.get('put/known.bin'))).to.deep.equal(bytes);
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
      const keys = [
        'jobs/a/3.txt',
        'jobs/a/1.txt',
        'jobs/a/sub/2.txt',
        'jobs/ab/1.txt',
        'jobs/b/1.txt',
        'jobs/a.txt',
        'jobsx/1.txt',
      ];
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
      expect((await store.list('jobs/')).map((s) => s.key)).to.deep.equal(
        [...keys.filter((k) => k.startsWith('jobs/'))].sort(),
      );
      expect(await store.list('nothing/here/')).to.deep.equal([]);
      // listKeys: the same keys, without reading any metadata.
      expect(await store.listKeys('jobs/a')).to.deep.equal([
        'jobs/a.txt',
        'jobs/a/1.txt',
        'jobs/a/3.txt',
        'jobs/a/sub/2.txt',
        'jobs/ab/1.txt',
      ]);
      expect(await store.listKeys('jobs/')).to.deep.equal((await store.list('jobs/')).map((s) => s.key));
      expect(await store.listKeys('nothing/here/')).to.deep.equal([]);
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
      const putProbe = new RetainedMemoryProbe();
      const gen = generatedStream(total, { onPull: (produced, ended) => putProbe.progress(produced, ended) });
      const ref = await store.put('big/eighty.bin', gen.stream, { mime: 'application/octet-stream' });
      const expected = gen.expected();
      expect(expected.size).to.equal(total);
      expect(ref).to.include({ key: 'big/eighty.bin', sha256: expected.sha256, size: total });
      expect(putProbe.retainedGrowth, `memory during put: ${putProbe.describe()}`).to.be.below(40 * MB);

      const st = await store.stat('big/eighty.bin');
      expect(st).to.include({ size: total, sha256: expected.sha256 });

      const getProbe = new RetainedMemoryProbe();
      const got = await digestStream(await store.get('big/eighty.bin'), (bytes) => getProbe.progress(bytes));
      getProbe.progress(total, true);
      expect(got).to.deep.equal({ sha256: expected.sha256, size: total });
      expect(getProbe.retainedGrowth, `memory during get: ${getProbe.describe()}`).to.be.below(40 * MB);
    });

    it('putFile stores a 60 MB file with its hash and leaves the file; with a known hash no byte passes the heap (local)', async function () {
      const total = 60 * MB;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-putfile-'));
      try {
        const file = path.join(dir, 'input.bin');
        const gen = generatedStream(total);
        await pipeline(gen.stream, fs.createWriteStream(file));
        const expected = gen.expected();
        const ref = await store.putFile('file/sixty.bin', file, { mime: 'video/mp4' });
        expect(ref).to.deep.equal({ key: 'file/sixty.bin', sha256: expected.sha256, size: total, mime: 'video/mp4' });
        expect(fs.statSync(file).size, 'the source file stays').to.equal(total);
        expect(await digestStream(await store.get('file/sixty.bin'))).to.deep.equal({
          sha256: expected.sha256,
          size: total,
        });
        // With the hash its caller computed (a download's), the file is copied in the kernel: no Buffer of it is
        // made, where a read stream makes ~1,000 of 64 KiB (only the local store: S3 has no copy from a local file
        // and streams it through `put`'s parts). The caller's hash is recorded as it is.
        const before = process.memoryUsage().arrayBuffers;
        const known = await store.putFile('file/known.bin', file, { sha256: 'a'.repeat(64) });
        const grown = process.memoryUsage().arrayBuffers - before;
        expect(known).to.include({ sha256: 'a'.repeat(64), size: total });
        if (store.kind === 'local') expect(grown, 'array buffers grown during putFile').to.be.below(4 * MB);
        const missing = await store.putFile('file/missing.bin', path.join(dir, 'absent')).then(
          () => null,
          (e: NodeJS.ErrnoException) => e,
        );
        expect(missing?.code).to.equal('ENOENT');
        expect(await store.stat('file/missing.bin')).to.equal(null);
        expect(await b.leftovers('file/missing.bin')).to.deep.equal([]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
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
        await waitFor(
          async () => {
            const left = await b.leftovers(key);
            if (left.length) throw new Error(`leftovers: ${left.join(', ')}`);
            return true;
          },
          `no temp state of ${key}`,
          30_000,
        );
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
      const items = Array.from({ length: 24 }, (_, i) => ({
        key: `conc/${String(i).padStart(2, '0')}.bin`,
        data: randomBytes(1000 + i * 997),
      }));
      const refs = await Promise.all(
        items.map((it, i) =>
          store.put(it.key, i % 2 ? it.data : Readable.from([it.data.subarray(0, 500), it.data.subarray(500)])),
        ),
      );
      refs.forEach((r, i) =>
        expect(r).to.include({ key: items[i]!.key, sha256: sha256(items[i]!.data), size: items[i]!.data.length }),
      );
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

blobStoreContract('local', localBackend);
blobStoreContract('s3', s3Backend);
