import fs from 'node:fs';
import type http from 'node:http';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startTestApi, type TestApi } from '../support/servers/api';
import { tempDir } from '../support/servers/engines';

const KEY = 'docs-ui-key-5c0ffee5c0ffee5c0ffee';
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The docs UI in a real headless Chromium, against the real app with a key and no localhost bypass. */
describe('Docs UI (/api/doc) in a headless browser', function () {
  this.timeout(60_000);

  let api: TestApi;
  let browser: Browser;
  let page: Page;
  let profileDir: string;
  const requested: string[] = [];
  const browserRequests: { url: string; headers: Record<string, string> }[] = [];
  const serverSaw: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  const pageErrors: string[] = [];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (set CHROMIUM_PATH)`);
    api = await startTestApi({ SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'false' });
    api.server.on('request', (req: http.IncomingMessage) =>
      serverSaw.push({ url: req.url ?? '', headers: req.headers }),
    );
    profileDir = tempDir('docproc-chromium-');
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profileDir,
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      timeout: 30_000,
    });
    page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    page.on('request', (req) => {
      requested.push(req.url());
      browserRequests.push({ url: req.url(), headers: req.headers() });
    });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    const res = await page.goto(`${api.url}/api/doc`, { waitUntil: 'networkidle0', timeout: 30_000 });
    expect(res?.status()).to.equal(200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await api?.close();
    if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  });

  it('renders the operations, among them GET /api/health and GET /api/common/', async () => {
    const ops = await page.$$eval('.opblock', (els) =>
      els.map((el) => ({
        method: el.querySelector('.opblock-summary-method')?.textContent?.trim(),
        path: el.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
      })),
    );
    expect(ops).to.deep.include({ method: 'GET', path: '/api/health' });
    expect(ops).to.deep.include({ method: 'GET', path: '/api/common/' });
    expect(ops).to.deep.include({ method: 'GET', path: '/api/openapi.json' });
    expect(pageErrors, 'uncaught page errors').to.deep.equal([]);
  });

  it('loaded the page, its assets and the OpenAPI document from the server itself', () => {
    const paths = requested.map((u) => new URL(u).pathname);
    for (const p of [
      '/api/doc',
      '/api/doc/swagger-ui.css',
      '/api/doc/swagger-ui-bundle.js',
      '/api/doc/init.js',
      '/api/openapi.json',
    ]) {
      expect(paths, p).to.include(p);
    }
  });

  it('sends the bare key from the Authorize dialog as X-Service-Api-Key on Try it out / Execute, and gets 200', async () => {
    await page.click('.auth-wrapper .btn.authorize');
    await page.waitForSelector('.modal-ux .auth-container');

    // The ApiKeyHeader form: the auth container whose heading names the scheme.
    const containers = await page.$$('.modal-ux .auth-container');
    let apiKeyForm = null;
    for (const c of containers) {
      const heading = await c.$eval('h4', (h) => h.textContent ?? '').catch(() => '');
      if (heading.includes('ApiKeyHeader')) apiKeyForm = c;
    }
    expect(apiKeyForm, 'the ApiKeyHeader form in the Authorize dialog').to.not.equal(null);
    const input = await apiKeyForm!.$('input');
    expect(input, 'the ApiKeyHeader input').to.not.equal(null);
    await input!.type(KEY);
    const authorize = await apiKeyForm!.$('button.authorize');
    expect(authorize, 'the Authorize button of the ApiKeyHeader form').to.not.equal(null);
    await authorize!.click();
    // Once authorised, the form says so and offers Logout ("Remove authorization") in place of Authorize.
    await apiKeyForm!.waitForSelector('button[aria-label="Remove authorization"]', { timeout: 30_000 });
    expect(await apiKeyForm!.$eval('h6', (h) => h.textContent?.trim())).to.equal('Authorized');
    await page.click('.modal-ux button.btn-done');
    await page.waitForSelector('.modal-ux', { hidden: true });

    const op = await page.waitForSelector('.opblock:has(.opblock-summary-path[data-path="/api/common/"])');
    const summary = await op!.$('.opblock-summary-control, .opblock-summary');
    await summary!.click();
    const tryOut = await op!.waitForSelector('button.try-out__btn');
    await tryOut!.click();
    const execute = await op!.waitForSelector('button.execute');
    const sawBefore = serverSaw.length;
    await execute!.click();

    const status = await op!.waitForSelector('.live-responses-table .response .response-col_status', {
      timeout: 30_000,
    });
    const statusText = await status!.evaluate((el) => el.textContent?.trim() ?? '');
    expect(statusText).to.match(/^200\b/);

    const fromBrowser = browserRequests.filter((r) => new URL(r.url).pathname === '/api/common/');
    expect(fromBrowser, 'the browser sent GET /api/common/').to.not.be.empty;
    expect(fromBrowser.at(-1)!.headers['x-service-api-key']).to.equal(KEY);

    const atServer = serverSaw.slice(sawBefore).filter((r) => r.url === '/api/common/');
    expect(atServer, 'the request reached the server').to.have.length(1);
    expect(atServer[0].headers['x-service-api-key']).to.equal(KEY);
  });

  it('loads nothing from any non-loopback origin', () => {
    expect(requested.length).to.be.greaterThan(0);
    const foreign = requested.filter((u) => {
      const url = new URL(u);
      if (url.protocol === 'data:' || url.protocol === 'blob:') return false;
      return !LOOPBACK_HOSTS.has(url.host.replace(/:\d+$/, ''));
    });
    expect(foreign).to.deep.equal([]);
  });
});
