import { expect } from 'chai';
import { rawRequest, type RawReply, type RawRequestOptions } from '../support/clients/raw-http';
import { startTestApi, type TestApi } from '../support/servers/api';

/**
 * Contract §2 over real sockets. Every client here is on loopback: other source addresses are chosen with
 * `localAddress` inside 127/8 (all loopback on Linux), so the whitelist can tell them apart.
 */

const KEY = 'test-key-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4';
const PROTECTED = '/api/common/';

type Reply = RawReply;

/** Raw HTTP: the path is sent as given (no normalisation) from the chosen source address. */
const send = (api: TestApi, path: string, opts: RawRequestOptions = {}): Promise<Reply> =>
  rawRequest(api.url, path, opts);

function expectUnauthorized(r: Reply, what: string): void {
  expect(r.status, what).to.equal(401);
  const body = r.json();
  expect(body.status, what).to.equal('error');
  expect(body.error.code, what).to.equal('UNAUTHORIZED');
  expect(body.error.message, what).to.be.a('string').and.not.equal('');
}

function expectHome(r: Reply, what: string): void {
  expect(r.status, what).to.equal(200);
  expect(r.json().docs, what).to.equal('/api/doc');
}

/** Exempt from the key (contract §2); /api/health itself answers 503 here since Temporal is unreachable. */
const EXEMPT = [
  '/api/health/live',
  '/api/openapi.json',
  '/api/doc',
  '/api/doc/',
  '/api/doc/swagger-ui.css',
  '/api/doc/init.js',
];
const DOCS = [
  '/api/doc',
  '/api/doc/',
  '/api/openapi.json',
  '/api/doc/swagger-ui.css',
  '/api/doc/swagger-ui-bundle.js',
  '/api/doc/init.js',
];
const LOOKALIKES = [
  '/api/docs',
  '/api/doc/../common/',
  '/api/doc/%2e%2e/common/',
  '/api/health/../common/',
  '/api/docx',
  '/api/doc/unknown.js',
  '/api/healthz',
  '/api/health/livez',
  '/api/openapi.json.bak',
  '/api/openapi.jsonx',
  '//api/health/live',
  '/API/HEALTH/LIVE',
];

describe('API authentication (contract §2)', function () {
  this.timeout(30_000);

  describe('with SERVICE_API_KEY set and ALLOW_LOCALHOST_NO_AUTH=false', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false' });
    });
    after(() => api?.close());

    it('rejects a request without a key with a 401 UNAUTHORIZED envelope and a Bearer challenge', async () => {
      const r = await send(api, PROTECTED);
      expectUnauthorized(r, 'no key');
      expect(r.headers['www-authenticate']).to.match(/^Bearer/);
      expect(r.headers['x-request-id']).to.be.a('string');
    });

    it('accepts the key as Authorization: Bearer', async () => {
      expectHome(await send(api, PROTECTED, { headers: { Authorization: `Bearer ${KEY}` } }), 'bearer');
    });

    it('accepts the key as X-Service-Api-Key', async () => {
      expectHome(await send(api, PROTECTED, { headers: { 'X-Service-Api-Key': KEY } }), 'header');
    });

    it('accepts the Bearer scheme in any letter case', async () => {
      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        expectHome(await send(api, PROTECTED, { headers: { Authorization: `${scheme} ${KEY}` } }), scheme);
      }
    });

    it('rejects a wrong key in both headers', async () => {
      const r = await send(api, PROTECTED, {
        headers: { Authorization: 'Bearer wrong', 'X-Service-Api-Key': 'wrong' },
      });
      expectUnauthorized(r, 'both wrong');
    });

    it('accepts a wrong Bearer token when X-Service-Api-Key is right', async () => {
      expectHome(
        await send(api, PROTECTED, { headers: { Authorization: 'Bearer wrong', 'X-Service-Api-Key': KEY } }),
        'header right',
      );
    });

    it('accepts a wrong X-Service-Api-Key when the Bearer token is right', async () => {
      expectHome(
        await send(api, PROTECTED, { headers: { Authorization: `Bearer ${KEY}`, 'X-Service-Api-Key': 'wrong' } }),
        'bearer right',
      );
    });

    it('rejects near misses: a prefix, an extension, another case, another scheme, an empty token, a query parameter', async () => {
      const cases: [string, Record<string, string>, string?][] = [
        ['prefix', { 'X-Service-Api-Key': KEY.slice(0, -1) }],
        ['extension', { 'X-Service-Api-Key': `${KEY}x` }],
        ['upper case', { 'X-Service-Api-Key': KEY.toUpperCase() }],
        ['Basic scheme', { Authorization: `Basic ${KEY}` }],
        ['no scheme', { Authorization: KEY }],
        ['empty bearer', { Authorization: 'Bearer ' }],
        ['empty header', { 'X-Service-Api-Key': '' }],
        ['query', {}, `${PROTECTED}?api_key=${KEY}`],
      ];
      for (const [what, headers, path] of cases)
        expectUnauthorized(await send(api, path ?? PROTECTED, { headers }), what);
    });

    it('lets /api/health through without a key (it reports 503 here: Temporal is unreachable)', async () => {
      const r = await send(api, '/api/health');
      expect(r.status).to.equal(503);
      expect(r.json().status).to.equal('unavailable');
    });

    it('lets exactly the exempt paths through without a key', async () => {
      for (const p of EXEMPT) expect((await send(api, p)).status, p).to.equal(200);
      expect((await send(api, '/api/health/live?verbose=1')).status, 'with a query string').to.equal(200);
    });

    it('asks for the key on paths that only resemble the exempt ones', async () => {
      for (const p of LOOKALIKES) expectUnauthorized(await send(api, p), p);
    });

    it('reaches the route behind a look-alike path once the key is given (404, not a bypass)', async () => {
      const r = await send(api, '/api/doc/unknown.js', { headers: { 'X-Service-Api-Key': KEY } });
      expect(r.status).to.equal(404);
      expect(r.json().error.code).to.equal('NOT_FOUND');
    });

    it('ignores Host and forwarded headers claiming a loopback client', async () => {
      const r = await send(api, PROTECTED, {
        headers: {
          Host: 'localhost',
          'X-Forwarded-For': '127.0.0.1',
          'X-Real-IP': '127.0.0.1',
          Forwarded: 'for=127.0.0.1',
          'X-Forwarded-Host': 'localhost',
        },
      });
      expectUnauthorized(r, 'spoofed');
    });

    it('never writes the key into a response body or header', async () => {
      const replies = [
        await send(api, PROTECTED),
        await send(api, PROTECTED, { headers: { Authorization: `Bearer ${KEY}` } }),
        await send(api, PROTECTED, { headers: { 'X-Service-Api-Key': KEY } }),
        await send(api, PROTECTED, { headers: { Authorization: `Bearer ${KEY}x`, 'X-Service-Api-Key': `${KEY}y` } }),
        await send(api, '/api/nope', { headers: { 'X-Service-Api-Key': KEY } }),
        await send(api, PROTECTED, { method: 'POST', headers: { 'X-Service-Api-Key': KEY } }),
        await send(api, '/api/openapi.json'),
        await send(api, '/api/doc'),
        await send(api, '/api/doc/init.js'),
        await send(api, '/api/health/live'),
      ];
      for (const r of replies) {
        expect(r.text).to.not.contain(KEY);
        expect(JSON.stringify(r.headers)).to.not.contain(KEY);
      }
    });
  });

  describe('with ALLOW_LOCALHOST_NO_AUTH=true and a key set', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'true' });
    });
    after(() => api?.close());

    it('lets loopback clients through without a key, from any 127/8 address', async () => {
      expectHome(await send(api, PROTECTED), '127.0.0.1');
      expectHome(await send(api, PROTECTED, { localAddress: '127.0.0.2' }), '127.0.0.2');
      expectHome(await send(api, PROTECTED, { localAddress: '127.45.6.7' }), '127.45.6.7');
    });

    it('still accepts the key', async () => {
      expectHome(await send(api, PROTECTED, { headers: { 'X-Service-Api-Key': KEY } }), 'key');
    });
  });

  describe('with ALLOW_LOCALHOST_NO_AUTH=true on an IPv6 loopback listener', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'true' }, { host: '::1' });
    });
    after(() => api?.close());

    it('lets a ::1 client through without a key', async () => {
      expectHome(await send(api, PROTECTED), '::1');
    });
  });

  describe('with ALLOW_DOC_WHITELIST=127.0.0.2/32 (key set, no localhost bypass)', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({
        SERVICE_API_KEY: KEY,
        ALLOW_LOCALHOST_NO_AUTH: 'false',
        ALLOW_DOC_WHITELIST: '127.0.0.2/32',
      });
    });
    after(() => api?.close());

    it('opens the docs UI, its assets and the OpenAPI document to the whitelisted address without a key', async () => {
      for (const p of DOCS) expect((await send(api, p, { localAddress: '127.0.0.2' })).status, p).to.equal(200);
    });

    it('asks other addresses for the key on the docs paths', async () => {
      for (const p of DOCS) {
        expectUnauthorized(await send(api, p, { localAddress: '127.0.0.3' }), `${p} from 127.0.0.3`);
        expectUnauthorized(await send(api, p), `${p} from 127.0.0.1`);
      }
    });

    it('serves the docs to other addresses that give the key', async () => {
      for (const p of DOCS) {
        const r = await send(api, p, { localAddress: '127.0.0.3', headers: { 'X-Service-Api-Key': KEY } });
        expect(r.status, p).to.equal(200);
      }
    });

    it('opens nothing else: the whitelisted address needs the key for the API', async () => {
      expectUnauthorized(await send(api, PROTECTED, { localAddress: '127.0.0.2' }), 'common from whitelisted');
      expectUnauthorized(
        await send(api, '/api/docs', { localAddress: '127.0.0.2' }),
        'docs lookalike from whitelisted',
      );
      expectUnauthorized(
        await send(api, '/api/doc/../common/', { localAddress: '127.0.0.2' }),
        'traversal from whitelisted',
      );
      expectHome(
        await send(api, PROTECTED, { localAddress: '127.0.0.2', headers: { Authorization: `Bearer ${KEY}` } }),
        'with key',
      );
    });

    it('keeps health exempt for everyone', async () => {
      expect((await send(api, '/api/health/live', { localAddress: '127.0.0.3' })).status).to.equal(200);
    });

    it('does not believe forwarded headers naming the whitelisted address', async () => {
      const r = await send(api, '/api/doc', {
        localAddress: '127.0.0.3',
        headers: { 'X-Forwarded-For': '127.0.0.2', 'X-Real-IP': '127.0.0.2', Forwarded: 'for=127.0.0.2' },
      });
      expectUnauthorized(r, 'spoofed whitelist');
    });
  });

  describe('with ALLOW_DOC_WHITELIST=127.0.0.0/30', () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({
        SERVICE_API_KEY: KEY,
        ALLOW_LOCALHOST_NO_AUTH: 'false',
        ALLOW_DOC_WHITELIST: '127.0.0.0/30',
      });
    });
    after(() => api?.close());

    it('opens the docs to the addresses inside the range', async () => {
      for (const la of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) {
        expect((await send(api, '/api/doc', { localAddress: la })).status, la).to.equal(200);
      }
    });

    it('asks the addresses outside the range for the key', async () => {
      for (const la of ['127.0.0.4', '127.0.0.5', '127.0.1.1'])
        expectUnauthorized(await send(api, '/api/doc', { localAddress: la }), la);
    });
  });

  describe('with an IPv6 whitelist on a ::1 listener', () => {
    describe('ALLOW_DOC_WHITELIST=::1/128', () => {
      let api: TestApi;
      before(async () => {
        api = await startTestApi(
          { SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false', ALLOW_DOC_WHITELIST: '::1/128' },
          { host: '::1' },
        );
      });
      after(() => api?.close());

      it('opens the docs to ::1 without a key', async () => {
        for (const p of DOCS) expect((await send(api, p)).status, p).to.equal(200);
      });

      it('opens nothing else to ::1', async () => {
        expectUnauthorized(await send(api, PROTECTED), 'common');
      });
    });

    describe('ALLOW_DOC_WHITELIST=2001:db8::/32', () => {
      let api: TestApi;
      before(async () => {
        api = await startTestApi(
          { SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false', ALLOW_DOC_WHITELIST: '2001:db8::/32' },
          { host: '::1' },
        );
      });
      after(() => api?.close());

      it('asks ::1 for the key on the docs', async () => {
        expectUnauthorized(await send(api, '/api/doc'), 'doc');
        expectUnauthorized(await send(api, '/api/openapi.json'), 'openapi');
        expect((await send(api, '/api/doc', { headers: { 'X-Service-Api-Key': KEY } })).status).to.equal(200);
      });
    });
  });

  describe('with no key configured (the embedded default)', () => {
    describe('on 127.0.0.1', () => {
      let api: TestApi;
      before(async () => {
        api = await startTestApi({});
      });
      after(() => api?.close());

      it('lets loopback clients through without a key', async () => {
        expectHome(await send(api, PROTECTED), '127.0.0.1');
        expectHome(await send(api, PROTECTED, { localAddress: '127.0.0.9' }), '127.0.0.9');
      });

      it('ignores whatever key a client sends', async () => {
        expectHome(await send(api, PROTECTED, { headers: { 'X-Service-Api-Key': 'anything' } }), 'stray key');
      });
    });

    describe('on ::1', () => {
      let api: TestApi;
      before(async () => {
        api = await startTestApi({}, { host: '::1' });
      });
      after(() => api?.close());

      it('lets the ::1 client through without a key', async () => {
        expectHome(await send(api, PROTECTED), '::1');
      });
    });
  });

  describe('with a malformed ALLOW_DOC_WHITELIST', () => {
    it('refuses to build the app', async () => {
      let api: TestApi | undefined;
      try {
        api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_DOC_WHITELIST: '127.0.0.1/33' });
      } catch (err) {
        expect(String(err)).to.match(/ALLOW_DOC_WHITELIST/);
        return;
      } finally {
        await api?.close();
      }
      expect.fail('the app started with an invalid whitelist');
    });
  });
});
