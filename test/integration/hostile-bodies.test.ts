import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { startTestApi, type TestApi } from '../support/servers/api';
import { rawRequest, type RawReply } from '../support/clients/raw-http';

// Hostile request bodies at the edge of the real service (issue 13, defects 5, 7, 9): deep JSON, bodies that are not
// in their declared Content-Encoding, unsupported encodings, compression bombs and multipart bodies over their field
// limits. A body that passes the edge is shown by the validation error of one of its fields (the job engine is not
// running here).

const MB = 1024 * 1024;
const JSON_TYPE = { 'Content-Type': 'application/json' };
const BOUNDARY = 'hostile-boundary-7f3a';
const MULTIPART_TYPE = { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` };

function expectError(r: RawReply, status: number, code: string): any {
  expect(r.status, r.text.slice(0, 300)).to.equal(status);
  expect(r.headers['content-type']).to.match(/^application\/json/);
  const body = r.json();
  expect(body.status).to.equal('error');
  expect(body.error.code).to.equal(code);
  expect(body.error.details).to.be.an('object');
  return body;
}

/** The paths of a 400's issues. */
const paths = (body: any): string[] => body.error.details.issues.map((i: { path: string }) => i.path);

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/**
 * A job whose parameters hold a value nested `depth` arrays deep (the whole body is 2 levels deeper). Of an unknown
 * job type, a body that passes the depth check is refused for that (`job_type`) instead: it passed the edge.
 */
const deepJob = (depth: number, type = 'no-such-type') =>
  `{"job_type":"${type}","parameters":{"operation":"html-to-markdown","html":"<p>x</p>","x":${nested(depth)}}}`;

/** A multipart body built by hand: text fields, then files. */
function multipart(fields: [string, string][], files: { name: string; filename: string; data: Buffer }[] = []): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields)
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: zlib.gzipSync,
  deflate: zlib.deflateSync,
  br: zlib.brotliCompressSync,
};

/**
 * A gzip bomb: `head`, then `expandedMb` MB of zeros, then `tail`, as concatenated gzip members (RFC 1952 allows
 * several; one 16 MB member of zeros compresses to about 16 KB), so a few MB on the wire expand to gigabytes.
 */
function gzipBomb(head: Buffer, expandedMb: number, tail: Buffer): Buffer {
  const member = zlib.gzipSync(Buffer.alloc(16 * MB), { level: 9 });
  return Buffer.concat([
    zlib.gzipSync(head),
    ...Array<Buffer>(Math.ceil(expandedMb / 16)).fill(member),
    zlib.gzipSync(tail),
  ]);
}

describe('hostile request bodies at the edge', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startTestApi({ MAX_JSON_MB: '1', MAX_UPLOAD_MB: '1' });
  });
  after(() => api?.close());
  const post = (p: string, headers: Record<string, string>, body: string | Buffer) =>
    rawRequest(api.url, p, { method: 'POST', headers, body });

  describe('deep JSON (MAX_JSON_DEPTH, default 64)', () => {
    it('refuses a job nested 4,200 arrays deep, and 100,000 deep, with 400 VALIDATION_ERROR naming the limit (not a 500)', async () => {
      for (const depth of [4200, 100_000]) {
        for (const p of ['/api/jobs/', '/api/jobs/batch']) {
          const job = deepJob(depth, 'transformer');
          const body = p === '/api/jobs/' ? job : `{"batch_name":"deep","jobs":[${job}]}`;
          const b = expectError(await post(p, JSON_TYPE, body), 400, 'VALIDATION_ERROR');
          expect(b.error.message, p).to.match(/nested deeper than 64 levels/);
          expect(b.error.details.max_depth).to.equal(64);
          expect(b.error.details.issues[0].message).to.match(/MAX_JSON_DEPTH/);
        }
      }
    });

    it('refuses 65 levels and passes 64 (the limit counts the whole body)', async () => {
      expectError(await post('/api/jobs/', JSON_TYPE, deepJob(63)), 400, 'VALIDATION_ERROR');
      expect(
        paths(expectError(await post('/api/jobs/', JSON_TYPE, deepJob(62)), 400, 'VALIDATION_ERROR')),
      ).to.deep.equal(['job_type']);
    });

    it('does not count brackets inside strings, escaped quotes included', async () => {
      const html = `<p>${'[{'.repeat(5000)}\\"${'['.repeat(100)}</p>`;
      const body = `{"job_type":"no-such-type","parameters":{"operation":"html-to-markdown","html":"${html}"}}`;
      expect(paths(expectError(await post('/api/jobs/', JSON_TYPE, body), 400, 'VALIDATION_ERROR'))).to.deep.equal([
        'job_type',
      ]);
    });

    it('applies to JSON in a multipart form field (the context of /api/pdf/process)', async () => {
      const body = multipart(
        [['context', `{"a":${nested(4200)}}`]],
        [{ name: 'file', filename: 'a.pdf', data: Buffer.from('%PDF-1.4\n') }],
      );
      const b = expectError(await post('/api/pdf/process', MULTIPART_TYPE, body), 400, 'VALIDATION_ERROR');
      expect(b.error.details.issues[0].path).to.equal('context');
    });

    it('follows MAX_JSON_DEPTH', async () => {
      const strict = await startTestApi({ MAX_JSON_DEPTH: '4' });
      try {
        const b = expectError(
          await rawRequest(strict.url, '/api/jobs/', { method: 'POST', headers: JSON_TYPE, body: deepJob(3) }),
          400,
          'VALIDATION_ERROR',
        );
        expect(b.error.details.max_depth).to.equal(4);
        const ok = expectError(
          await rawRequest(strict.url, '/api/jobs/', { method: 'POST', headers: JSON_TYPE, body: deepJob(2) }),
          400,
          'VALIDATION_ERROR',
        );
        expect(paths(ok)).to.deep.equal(['job_type']);
      } finally {
        await strict.close();
      }
    });
  });

  describe('Content-Encoding', () => {
    const html = (encoding: string, body: Buffer | string) =>
      post('/api/transformer/html-to-markdown', { ...JSON_TYPE, 'Content-Encoding': encoding }, body);

    it('decodes gzip, deflate and br JSON bodies', async () => {
      for (const [encoding, encode] of Object.entries(ENCODERS)) {
        // A field of the wrong type: the 400 names it, so the body was decoded and parsed.
        const b = expectError(await html(encoding, encode(Buffer.from('{"html":5}'))), 400, 'VALIDATION_ERROR');
        expect(paths(b), encoding).to.deep.equal(['html']);
      }
    });

    it('answers a body that is not in its declared encoding with 400 VALIDATION_ERROR (JSON and multipart)', async () => {
      for (const encoding of Object.keys(ENCODERS)) {
        const b = expectError(await html(encoding, '{"html":"<p>x</p>"}'), 400, 'VALIDATION_ERROR');
        expect(b.error.message).to.include(encoding);
        const body = multipart([], [{ name: 'file', filename: 'a.pdf', data: Buffer.from('%PDF-1.4\n') }]);
        expectError(
          await post('/api/pdf/process', { ...MULTIPART_TYPE, 'Content-Encoding': encoding }, body),
          400,
          'VALIDATION_ERROR',
        );
      }
    });

    it('answers an unsupported encoding (compress, zstd, two codings) with 415 naming the supported ones', async () => {
      for (const encoding of ['compress', 'zstd', 'gzip, br']) {
        const b = expectError(await html(encoding, '{"html":"<p>x</p>"}'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(b.error.details.supported).to.include.members(['gzip', 'deflate', 'br']);
        const body = multipart([], [{ name: 'file', filename: 'a.pdf', data: Buffer.from('%PDF-1.4\n') }]);
        expectError(
          await post('/api/pdf/process', { ...MULTIPART_TYPE, 'Content-Encoding': encoding }, body),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
      }
    });

    it('answers a compressed form body (not accepted as a media type) with 415, not a 500', async () => {
      const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' };
      for (const body of ['html=%3Cp%3Ex%3C%2Fp%3E', zlib.gzipSync('html=x')]) {
        expectError(await post('/api/transformer/html-to-markdown', headers, body), 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
    });

    it('decodes a gzip multipart body: an empty file arrives empty, fields and a file arrive', async () => {
      const headers = { ...MULTIPART_TYPE, 'Content-Encoding': 'gzip' };
      const empty = multipart([], [{ name: 'file', filename: 'a.pdf', data: Buffer.alloc(0) }]);
      const b = expectError(await post('/api/pdf/process', headers, zlib.gzipSync(empty)), 422, 'UNPROCESSABLE_INPUT');
      expect(b.error.details.reason).to.equal('empty');
      const pdf = multipart(
        [['page_start', '0']],
        [{ name: 'file', filename: 'a.pdf', data: Buffer.from('%PDF-1.4\n') }],
      );
      const v = expectError(await post('/api/pdf/process', headers, zlib.gzipSync(pdf)), 400, 'VALIDATION_ERROR');
      expect(new Set(paths(v))).to.deep.equal(new Set(['page_start']));
    });

    it('refuses gzip bombs (4 GB expanded) with 413 and inflates no more than the limit: JSON and multipart', async () => {
      const rss = process.memoryUsage().rss;
      const json = gzipBomb(Buffer.from('{"html":"'), 4096, Buffer.from('"}'));
      expect(json.length).to.be.below(8 * MB);
      const j = expectError(await html('gzip', json), 413, 'PAYLOAD_TOO_LARGE');
      expect(j.error.details.limit_bytes).to.equal(1 * MB);
      const head = Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n`,
      );
      const form = gzipBomb(head, 4096, Buffer.from(`\r\n--${BOUNDARY}--\r\n`));
      const m = expectError(
        await post('/api/pdf/process', { ...MULTIPART_TYPE, 'Content-Encoding': 'gzip' }, form),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(m.error.details.limit_bytes)
        .to.be.a('number')
        .and.below(8 * MB);
      // Inflating either bomb into memory would need 4 GB; the API and this test share the process.
      expect((process.memoryUsage().rss - rss) / MB).to.be.below(512);
      const uploads = path.join(api.config.dataDir, 'tmp', 'uploads');
      // No file is left in any upload directory (the API keeps one per process under it).
      const left = fs.existsSync(uploads)
        ? fs.readdirSync(uploads, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
        : [];
      expect(left.map((e) => e.name)).to.deep.equal([]);
    });
  });

  describe('multipart limits (each its own message, 413 as the contract says)', () => {
    const file = { name: 'file', filename: 'a.pdf', data: Buffer.from('%PDF-1.4\n') };

    it('too many fields: 413 saying so, with the field limit (not "the upload is too large")', async () => {
      const fields = Array.from({ length: 201 }, (_, i): [string, string] => [`f${i}`, 'x']);
      const b = expectError(
        await post('/api/pdf/process', MULTIPART_TYPE, multipart(fields, [file])),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(b.error.message).to.match(/too many fields/);
      expect(b.error.details).to.deep.equal({ limit_fields: 200 });
    });

    it('too much field text: 413 with the field byte limit', async () => {
      const b = expectError(
        await post('/api/pdf/process', MULTIPART_TYPE, multipart([['context', 'x'.repeat(2 * MB + 1)]], [file])),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(b.error.message).to.match(/text fields are too large/);
      expect(b.error.details).to.deep.equal({ limit_field_bytes: 2 * MB });
    });

    it('too many files: 413 with the file count limit', async () => {
      const b = expectError(
        await post('/api/pdf/process', MULTIPART_TYPE, multipart([], Array<typeof file>(21).fill(file))),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(b.error.message).to.match(/too many files/);
      expect(b.error.details).to.deep.equal({ limit_files: 20 });
    });

    it('a file over MAX_UPLOAD_MB: 413 "upload is too large" with limit_bytes', async () => {
      const b = expectError(
        await post('/api/pdf/process', MULTIPART_TYPE, multipart([], [{ ...file, data: Buffer.alloc(MB + 1) }])),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(b.error.message).to.match(/upload is too large/);
      expect(b.error.details).to.deep.equal({ limit_bytes: MB });
    });
  });
});
