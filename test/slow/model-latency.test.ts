import { expect } from 'chai';
import '../support/servers/stack';
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';

// A model that thinks as long as real ones do for a long summary: 90 s before it answers. The job completes with
// exactly one call (before, the step's 10 s heartbeat timeout made every call over ~10 s be paid for again and
// every one over ~25 s fail the job).

describe('a model that answers after 90 s', function () {
  this.timeout(300_000);
  let s: Stack;
  let llm: LlmServer;
  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_TIMEOUT_MS: '300000', SYNC_WAIT_MS: '240000' },
  );

  it('completes a summary and a translation with exactly one call each', async () => {
    for (const [path, body] of [
      ['/api/transformer/summarize', { text: 'Ein Bericht, über den das Modell lange nachdenkt.', use_cache: false }],
      [
        '/api/transformer/text',
        { text: 'Guten Morgen', source_language: 'de', target_language: 'en', use_cache: false },
      ],
    ] as const) {
      llm.reset();
      llm.latency(90_000);
      const t0 = Date.now();
      const r = await s.call('POST', path, body);
      const wall = Date.now() - t0;
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(llm.chatRequests(), `${path}: one model call`).to.have.length(1);
      expect(wall).to.be.at.least(90_000);
      process.stdout.write(
        `      ${path}: ${llm.chatRequests().length} model call, ${(wall / 1000).toFixed(1)} s wall\n`,
      );
    }
  });
});
