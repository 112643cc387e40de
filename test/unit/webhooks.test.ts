import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import {
  classifyResponse,
  completedBody,
  DEFAULT_WEBHOOK_ATTEMPTS,
  failedBody,
  progressBody,
  retryDelayMs,
} from '../../core/jobs/webhooks';
import { signWebhook, verifyWebhookSignature, webhookHeaders } from '../../providers/webhook/signature';

// Expected signatures computed once, independently, with OpenSSL:
//   printf '%s' '<id>.<timestamp>.<body>' | openssl dgst -sha256 -hmac '<key>' -binary | base64
const VECTORS = {
  completed: 'v1,MMy3eAKVF/zYKFF8dgEfjX5D7z7LTE+Sam9NDv+8ARY=', // key tok-123, evt_job-1_3, 1700000000, `body` below
  tokenKeyed: 'v1,bZuVbZrtHmYnc+m4WPBlYS+FmE+W0yEe92VZXN+dGI8=', // key tok, evt_1, 1700000000, {"a":1}
  secretKeyed: 'v1,JDXlLkBcHBEO7FsiqQ1BJG+XqCxOomVThrHscgnDMuQ=', // key sec, evt_1, 1700000000, {"a":1}
};

describe('webhook signatures', () => {
  const id = 'evt_job-1_3';
  const ts = 1_700_000_000;
  const body = JSON.stringify({ phase: 'completed', message: 'done', data: { text: 'Grüße 🎉' } });

  it('equal an HMAC-SHA256 computed independently with OpenSSL (UTF-8 body)', () => {
    expect(signWebhook('tok-123', id, ts, body)).to.equal(VECTORS.completed);
  });

  it('refuse a timestamp that is not integer seconds', () => {
    expect(() => signWebhook('s', id, 1.5, body)).to.throw(RangeError);
  });

  it('verify the known vector with the right secret, id, timestamp and body', () => {
    expect(verifyWebhookSignature('tok-123', id, ts, body, VECTORS.completed)).to.equal(true);
  });

  it('reject a tampered body, id, timestamp or secret', () => {
    const sig = VECTORS.completed;
    expect(verifyWebhookSignature('tok-123', id, ts, body.replace('done', 'dome'), sig)).to.equal(false);
    expect(verifyWebhookSignature('tok-123', id, ts, body + ' ', sig)).to.equal(false);
    expect(verifyWebhookSignature('tok-123', 'evt_job-1_4', ts, body, sig)).to.equal(false);
    expect(verifyWebhookSignature('tok-123', id, ts + 1, body, sig)).to.equal(false);
    expect(verifyWebhookSignature('tok-123', id, ts - 1, body, sig)).to.equal(false);
    expect(verifyWebhookSignature('tok-124', id, ts, body, sig)).to.equal(false);
  });

  it('accept one valid signature among several space-separated ones', () => {
    const good = signWebhook('new-secret', id, ts, body);
    const old = signWebhook('old-secret', id, ts, body);
    expect(verifyWebhookSignature('new-secret', id, ts, body, `${old} ${good}`)).to.equal(true);
    expect(verifyWebhookSignature('new-secret', id, ts, body, `${old} v2,${good.slice(3)}`)).to.equal(false);
  });

  it('reject malformed headers, and a signature whose base64 differs only in ignored characters, without throwing', () => {
    const sig = VECTORS.completed;
    for (const h of [
      '',
      'v1',
      'v1,',
      'v1,!!!',
      'garbage',
      ' , ',
      sig.slice(3),
      `${sig}=`,
      `${sig.slice(0, -1)}!`,
      `${sig}\n`,
    ]) {
      expect(verifyWebhookSignature('tok-123', id, ts, body, h), h).to.equal(false);
    }
    expect(verifyWebhookSignature('tok-123', id, Number.NaN, body, sig)).to.equal(false);
  });
});

describe('webhookHeaders', () => {
  const base = { id: 'evt_1', timestamp: 1_700_000_000, body: '{"a":1}' };

  it('with a token: bearer, callback token, and a signature keyed by the token', () => {
    const h = webhookHeaders({ ...base, token: 'tok', signingSecret: 'sec' });
    expect(h).to.deep.equal({
      'Content-Type': 'application/json',
      'User-Agent': 'docproc-webhooks/1',
      'X-Webhook-Id': 'evt_1',
      'X-Webhook-Timestamp': '1700000000',
      'X-Webhook-Signature': VECTORS.tokenKeyed,
      Authorization: 'Bearer tok',
      'X-Callback-Token': 'tok',
    });
  });

  it('with a signing secret only: a signature keyed by the secret and no token headers', () => {
    const h = webhookHeaders({ ...base, signingSecret: 'sec' });
    expect(h['X-Webhook-Signature']).to.equal(VECTORS.secretKeyed);
    expect(h).to.not.have.any.keys('Authorization', 'X-Callback-Token');
  });

  it('with neither: id, timestamp and content type, but no signature', () => {
    expect(webhookHeaders(base)).to.deep.equal({
      'Content-Type': 'application/json',
      'User-Agent': 'docproc-webhooks/1',
      'X-Webhook-Id': 'evt_1',
      'X-Webhook-Timestamp': '1700000000',
    });
  });
});

describe('classifyResponse', () => {
  const table: [number, string][] = [
    [200, 'delivered'],
    [201, 'delivered'],
    [202, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [408, 'retry'],
    [429, 'retry'],
    [400, 'give-up'],
    [401, 'give-up'],
    [403, 'give-up'],
    [404, 'give-up'],
    [410, 'give-up'],
    [413, 'give-up'],
    [422, 'give-up'],
    [301, 'give-up'],
    [302, 'give-up'],
    [307, 'give-up'],
    [100, 'give-up'],
  ];
  for (const [status, outcome] of table) {
    it(`treats ${status} as ${outcome}`, () => expect(classifyResponse(status)).to.equal(outcome));
  }
});

describe('retryDelayMs', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  const gaps = Array.from({ length: DEFAULT_WEBHOOK_ATTEMPTS - 1 }, (_, i) => retryDelayMs(i + 1, null, now));

  it('defaults to 8 attempts', () => expect(DEFAULT_WEBHOOK_ATTEMPTS).to.equal(8));

  it('grows and never shrinks', () => {
    for (let i = 1; i < 20; i++) expect(retryDelayMs(i + 1, null, now)).to.be.at.least(retryDelayMs(i, null, now));
    expect(gaps[1]).to.be.greaterThan(gaps[0]);
  });

  it('is deterministic', () => {
    for (let i = 1; i <= 10; i++) expect(retryDelayMs(i)).to.equal(retryDelayMs(i));
  });

  it('spreads the default attempts over about an hour', () => {
    const total = gaps.reduce((a, b) => a + b, 0);
    expect(gaps).to.deep.equal([10_000, 30_000, 90_000, 270_000, 810_000, 1_200_000, 1_200_000]);
    expect(total).to.be.within(50 * 60_000, 70 * 60_000);
  });

  it('honours a longer Retry-After in seconds', () => {
    expect(retryDelayMs(1, '120', now)).to.equal(120_000);
  });

  it('keeps the backoff when Retry-After asks for less', () => {
    expect(retryDelayMs(3, '5', now)).to.equal(90_000);
    expect(retryDelayMs(2, '0', now)).to.equal(30_000);
  });

  it('honours a Retry-After HTTP date', () => {
    const at = new Date(now + 10 * 60_000).toUTCString();
    expect(retryDelayMs(1, at, now)).to.equal(10 * 60_000);
  });

  it('ignores a Retry-After date in the past and unparsable values', () => {
    expect(retryDelayMs(1, new Date(now - 60_000).toUTCString(), now)).to.equal(10_000);
    for (const v of ['soon', '-5', '1.5', '', '  ']) expect(retryDelayMs(1, v, now), v).to.equal(10_000);
  });

  it('caps Retry-After at an hour', () => {
    expect(retryDelayMs(1, '86400', now)).to.equal(3_600_000);
    expect(retryDelayMs(1, new Date(now + 5 * 3_600_000).toUTCString(), now)).to.equal(3_600_000);
  });

  it('treats attempts below 1 as the first', () => {
    expect(retryDelayMs(0, null, now)).to.equal(10_000);
    expect(retryDelayMs(Number.NaN, null, now)).to.equal(10_000);
  });
});

describe('webhook bodies', () => {
  it('progress has phase, progress, message, process and job', () => {
    expect(progressBody('job-1', 'client-7', 40, 'OCR page 4 of 10')).to.deep.equal({
      phase: 'processing',
      progress: 40,
      message: 'OCR page 4 of 10',
      process: { id: 'job-1' },
      job: { id: 'client-7' },
    });
  });

  it('completion carries the data', () => {
    const body = completedBody('job-1', 'client-7', 'Completed', { text: 'x' });
    expect(body).to.deep.equal({
      phase: 'completed',
      message: 'Completed',
      process: { id: 'job-1' },
      job: { id: 'client-7' },
      data: { text: 'x' },
    });
    expect(Object.keys(body)).to.deep.equal(['phase', 'message', 'process', 'job', 'data']);
  });

  it('failure carries the error', () => {
    const error = { code: 'UNPROCESSABLE_INPUT', message: 'corrupt PDF', details: {} };
    const body = failedBody('job-1', undefined, 'Failed', error);
    expect(body).to.deep.equal({
      phase: 'failed',
      message: 'Failed',
      process: { id: 'job-1' },
      job: { id: null },
      error,
    });
    expect(Object.keys(body)).to.deep.equal(['phase', 'message', 'process', 'job', 'error']);
  });

  it('a missing client job id is null', () => {
    expect(progressBody('job-1', null, 0, 'Queued').job).to.deep.equal({ id: null });
    expect(completedBody('job-1', undefined, 'ok', null).job).to.deep.equal({ id: null });
  });
});

describe('core/jobs/webhooks', () => {
  it('imports no Node built-in and no provider, so workflow code can bundle it', () => {
    const src = readFileSync(new URL('../../core/jobs/webhooks.ts', import.meta.url), 'utf8');
    expect(src).to.not.match(/\bfrom\s+['"](node:|crypto|buffer)/);
    expect(src).to.not.match(/\bfrom\s+['"][./]*providers\//);
    expect(src).to.not.match(/\brequire\(|\bBuffer\b/);
  });
});
