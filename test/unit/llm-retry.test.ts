import { expect } from 'chai';
import { backoffDelay, parseRetryAfter, redact } from '../../providers/llm/retry';
import { computeCost, UsageRecorder } from '../../providers/llm/usage';
import { parseJsonObject } from '../../providers/llm/openai.provider';

describe('LLM retry and usage helpers', () => {
  it('reads Retry-After as seconds, as an HTTP date, and retry-after-ms first', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).to.equal(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).to.equal(500);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }), now)).to.equal(7000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 00:00:00 GMT' }), now)).to.equal(0);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).to.equal(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).to.equal(undefined);
    expect(parseRetryAfter(new Headers(), now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
  });

  it('backs off exponentially from 500 ms, capped at 20 s, and lets a larger Retry-After win up to 60 s', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, undefined))).to.deep.equal([500, 1000, 2000, 4000, 8000]);
    expect(backoffDelay(10, undefined)).to.equal(20_000);
    expect(backoffDelay(1, 3000)).to.equal(3000);
    expect(backoffDelay(3, 100)).to.equal(2000);
    expect(backoffDelay(1, 3_600_000)).to.equal(60_000);
  });

  it('redacts the API key and key-shaped tokens', () => {
    const out = redact(
      'Incorrect API key provided: my-long-secret. Also sk-abc123def and Bearer xyz',
      'my-long-secret',
    );
    expect(out).to.not.include('my-long-secret').and.not.include('sk-abc123def').and.not.include('xyz');
  });

  it('accepts a JSON object, also inside code fences or prose, and nothing else', () => {
    expect(parseJsonObject('{"a":1}')).to.deep.equal({ ok: true, value: { a: 1 } });
    expect(parseJsonObject('```json\n{"a":1}\n```')).to.deep.equal({ ok: true, value: { a: 1 } });
    expect(parseJsonObject('Here you are: {"a": {"b": 2}} Done.')).to.deep.equal({ ok: true, value: { a: { b: 2 } } });
    expect(parseJsonObject('[1,2]').ok).to.equal(false);
    expect(parseJsonObject('{"a": ').ok).to.equal(false);
    expect(parseJsonObject('').ok).to.equal(false);
  });

  it('prices calls per 1k tokens and reports 0 for unknown models', () => {
    const prices = { m: { input: 0.5, output: 1.5 } };
    expect(computeCost(prices, 'm', 1000, 500)).to.equal(1.25);
    expect(computeCost(prices, 'm', 1, 1)).to.equal(0.002);
    expect(computeCost(prices, 'other', 1000, 1000)).to.equal(0);
  });

  it('sums recorded usages into the spec usage record', () => {
    const r = new UsageRecorder();
    expect(r.summary()).to.deep.equal({ total_tokens: 0, total_cost: 0, requests: [] });
    r.record({
      model: 'm',
      purpose: 'translate',
      prompt_tokens: 10,
      completion_tokens: 5,
      tokens: 15,
      cost: 0.1,
      duration_ms: 12,
    });
    r.record({
      model: 'v',
      purpose: 'vision_ocr',
      prompt_tokens: 100,
      completion_tokens: 20,
      tokens: 120,
      cost: 0.2,
      duration_ms: 30,
    });
    expect(r.summary()).to.deep.equal({
      total_tokens: 135,
      total_cost: 0.3,
      requests: [
        { model: 'm', purpose: 'translate', tokens: 15, duration_ms: 12 },
        { model: 'v', purpose: 'vision_ocr', tokens: 120, duration_ms: 30 },
      ],
    });
  });
});
