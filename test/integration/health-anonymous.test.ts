import { expect } from 'chai';
import { HEALTH_CACHE_MS } from '../../api/services/health';
import { TEMPORAL_PROBE } from '../../api/temporal';
import { SERVICE_VERSION } from '../../core/runtime/version';
import { startTestApi } from '../support/servers/api';
import { waitFor } from '../support/wait';
import { useStack, type Stack } from '../support/servers/stack';
import { countCalls } from '../support/workflows/temporal-calls';

// Contract §11 (issue 33 item 7): without the key, /api/health answers its status alone (and the 503), from the
// probes' last word: no storage write and no Temporal call per call, no versions, queue names, hosts or error texts,
// and `?probe=workflow` starts nothing. With the key, or where the server lets the caller through without one, the
// whole report, checked live, and the workflow probe runs.

const KEY = 'health-anonymous-key';
const WITH_KEY = { 'X-Service-Api-Key': KEY };

/** Counts the storage checks (a write and a delete each) the API's health makes on its store. */
function countStoreChecks(store: { check(): Promise<void> }): { count: () => number; stop: () => void } {
  const original = store.check;
  let n = 0;
  store.check = function (this: unknown) {
    n += 1;
    return original.call(this);
  };
  return { count: () => n, stop: () => void (store.check = original) };
}

describe('health for callers without the key: the status alone, from the cached probe', function () {
  this.timeout(180_000);
  let s: Stack;
  useStack((stack) => (s = stack), { SERVICE_API_KEY: KEY });

  before(async () => {
    await waitFor(
      async () => (await s.call('GET', '/api/health', undefined, WITH_KEY)).body.status === 'ok' || undefined,
      'the stack to be healthy',
      60_000,
    );
  });

  it('answers an anonymous caller its status alone, with no storage write or Temporal call of its own', async () => {
    const checks = countStoreChecks(s.api.store);
    const calls = countCalls(s.api.temporal.connection);
    const t0 = Date.now();
    const n = 40;
    const answers: [number, string][] = [];
    try {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${s.url}/api/health${i % 2 ? '?probe=workflow' : ''}`);
        answers.push([res.status, await res.text()]);
      }
    } finally {
      checks.stop();
      calls.stop();
    }
    const elapsed = Date.now() - t0;
    // At most one refresh of the cached report per HEALTH_CACHE_MS (and one at the start), whatever n is.
    const refreshes = Math.ceil(elapsed / HEALTH_CACHE_MS) + 1;
    const probes = Math.ceil(elapsed / TEMPORAL_PROBE.everyMs) + 1;
    const figures = `${n} calls in ${elapsed} ms: ${checks.count()} storage checks, ${calls.of()} Temporal calls`;
    process.stdout.write(`      anonymous health: ${figures}\n`);
    expect(checks.count(), figures).to.be.at.most(refreshes);
    expect(calls.of('startWorkflowExecution'), 'no workflow probe without the key').to.equal(0);
    expect(calls.of('describeTaskQueue'), figures).to.be.at.most(4 * refreshes);
    // The reachability probe runs anyway (every TEMPORAL_PROBE.everyMs), callers or not.
    expect(calls.of('getSystemInfo'), figures).to.be.at.most(refreshes + probes);
    expect(checks.count() + calls.of(), `fewer than one per call: ${figures}`).to.be.below(n);
    for (const [status, text] of answers) {
      expect(status, text).to.equal(200);
      expect(JSON.parse(text)).to.deep.equal({ status: 'ok' });
      for (const secret of [SERVICE_VERSION, s.api.config.TASK_QUEUE_PREFIX, 'tesseract', '127.0.0.1'])
        expect(text).to.not.include(secret);
    }
  });

  it('answers a caller with the key the whole report, checked live, and runs the workflow probe only for it', async () => {
    const checks = countStoreChecks(s.api.store);
    const calls = countCalls(s.api.temporal.connection);
    try {
      for (const headers of [WITH_KEY, { Authorization: `Bearer ${KEY}` }]) {
        const r = await s.call('GET', '/api/health', undefined, headers);
        expect(r.status).to.equal(200);
        expect(r.body).to.include({ status: 'ok', version: SERVICE_VERSION });
        expect(r.body.checks.temporal.status).to.equal('ok');
        expect(r.body.checks.storage.status).to.equal('ok');
        expect(Object.keys(r.body.checks.worker.pollers).join(' ')).to.include(s.api.config.TASK_QUEUE_PREFIX);
        expect(r.body.checks.providers.ocr.engine).to.equal('tesseract');
      }
      expect(checks.count(), 'a storage check per call with the key').to.equal(2);
      const probed = await s.call('GET', '/api/health?probe=workflow', undefined, WITH_KEY);
      expect(probed.status).to.equal(200);
      expect(probed.body.checks.workflow.status).to.equal('ok');
      expect(calls.of('startWorkflowExecution'), 'the workflow probe').to.equal(1);
      // A wrong key is no key: the status alone, not a 401 (health stays exempt).
      const wrong = await s.call('GET', '/api/health?probe=workflow', undefined, { 'X-Service-Api-Key': 'wrong' });
      expect(wrong.status).to.equal(200);
      expect(wrong.body).to.deep.equal({ status: 'ok' });
      expect(calls.of('startWorkflowExecution')).to.equal(1);
    } finally {
      checks.stop();
      calls.stop();
    }
  });
});

describe('health where the server lets a caller through without the key, and a 503 without it', function () {
  this.timeout(60_000);

  for (const [mode, env] of [
    ['no key configured (loopback clients are served)', {}],
    ['ALLOW_LOCALHOST_NO_AUTH=true', { SERVICE_API_KEY: KEY, ALLOW_LOCALHOST_NO_AUTH: 'true' }],
  ] as const) {
    it(`answers a loopback caller the whole report with ${mode}`, async () => {
      const api = await startTestApi(env);
      try {
        const res = await fetch(`${api.url}/api/health`);
        const body = (await res.json()) as Record<string, any>;
        // Temporal is not running here: 503, with every check and its reason.
        expect(res.status).to.equal(503);
        expect(body.status).to.equal('unavailable');
        expect(body.checks.temporal.status).to.equal('unavailable');
        expect(body.checks.temporal.message).to.be.a('string');
        expect(body.version).to.equal(SERVICE_VERSION);
      } finally {
        await api.close();
      }
    });
  }

  it('answers a caller without the key 503 with the status alone: no check, reason or address', async () => {
    const api = await startTestApi({ SERVICE_API_KEY: KEY });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${api.url}/api/health`);
        expect(res.status).to.equal(503);
        expect(await res.json()).to.deep.equal({ status: 'unavailable' });
      }
      const keyed = await fetch(`${api.url}/api/health`, { headers: WITH_KEY });
      expect(keyed.status).to.equal(503);
      expect(((await keyed.json()) as Record<string, any>).checks.temporal.status).to.equal('unavailable');
    } finally {
      await api.close();
    }
  });
});
