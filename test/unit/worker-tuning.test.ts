import { expect } from 'chai';
import os from 'node:os';
import { ConfigError, loadConfig } from '../../core/config/config';
import { llmSlots, memoryLimitBytes, queueTuning } from '../../worker/worker-tuning';

const GB = 1024 ** 3;

describe('worker tuning and queues', () => {
  it('without a memory budget keeps fixed slots: IO_CONCURRENCY, MEDIA_CONCURRENCY, 40 workflow tasks, 1,000 cached workflows', () => {
    const c = loadConfig({ IO_CONCURRENCY: '20', MEDIA_CONCURRENCY: '3' });
    expect(queueTuning(c, 'io', 8 * GB)).to.deep.equal({
      maxConcurrentActivityTaskExecutions: 20,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxCachedWorkflows: 1000,
    });
    expect(queueTuning(c, 'media', 8 * GB)).to.deep.equal({ maxConcurrentActivityTaskExecutions: 3 });
    expect(queueTuning(loadConfig({}), 'media', 8 * GB).maxConcurrentActivityTaskExecutions).to.equal(
      Math.max(1, os.availableParallelism()),
    );
  });

  it('WORKER_MAX_MEMORY_MB hands activity slots out through the resource-based tuner at the budget share of the limit', () => {
    const c = loadConfig({ WORKER_MAX_MEMORY_MB: '2048', MEDIA_CONCURRENCY: '4', IO_CONCURRENCY: '50' });
    const media = queueTuning(c, 'media', 8 * GB);
    expect(media).not.to.have.property('maxConcurrentActivityTaskExecutions');
    const slots = (media.tuner as any).activityTaskSlotSupplier;
    expect(slots).to.include({ type: 'resource-based', minimumSlots: 1, maximumSlots: 4 });
    expect(slots.tunerOptions).to.deep.equal({ targetMemoryUsage: 0.25, targetCpuUsage: 1 });
    const io = queueTuning(c, 'io', 8 * GB);
    expect((io.tuner as any).activityTaskSlotSupplier.maximumSlots).to.equal(50);
    expect((io.tuner as any).workflowTaskSlotSupplier).to.deep.equal({ type: 'fixed-size', numSlots: 40 });
    expect(io.maxCachedWorkflows).to.equal(512);
  });

  it('caps the target at 95 % of the limit and keeps the workflow cache between 10 and 1,000', () => {
    const big = loadConfig({ WORKER_MAX_MEMORY_MB: '65536' });
    expect(
      (queueTuning(big, 'io', 4 * GB).tuner as any).activityTaskSlotSupplier.tunerOptions.targetMemoryUsage,
    ).to.equal(0.95);
    expect(queueTuning(big, 'io', 4 * GB).maxCachedWorkflows).to.equal(1000);
    expect(queueTuning(loadConfig({ WORKER_MAX_MEMORY_MB: '20' }), 'io', 4 * GB).maxCachedWorkflows).to.equal(10);
  });

  it('reads the container memory limit from the cgroup (v2, then v1), else the machine memory', () => {
    const files = (m: Record<string, string>) => (p: string) => {
      if (p in m) return m[p];
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    };
    const half = Math.floor(os.totalmem() / 2);
    expect(memoryLimitBytes(files({ '/sys/fs/cgroup/memory.max': `${half}\n` }))).to.equal(half);
    expect(memoryLimitBytes(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).to.equal(os.totalmem());
    expect(
      memoryLimitBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': String(512 * 1024 * 1024) })),
    ).to.equal(512 * 1024 * 1024);
    expect(memoryLimitBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' }))).to.equal(
      os.totalmem(),
    );
    expect(memoryLimitBytes(files({}))).to.equal(os.totalmem());
  });

  it('WORKER_QUEUES lists io, media and llm (default all three; `both`, from before the llm queue, means all), and refuses anything else', () => {
    expect(loadConfig({}).WORKER_QUEUES).to.deep.equal(['io', 'media', 'llm']);
    expect(loadConfig({ WORKER_QUEUES: 'both' }).WORKER_QUEUES).to.deep.equal(['io', 'media', 'llm']);
    expect(loadConfig({ WORKER_QUEUES: 'all' }).WORKER_QUEUES).to.deep.equal(['io', 'media', 'llm']);
    expect(loadConfig({ WORKER_QUEUES: 'media' }).WORKER_QUEUES).to.deep.equal(['media']);
    expect(loadConfig({ WORKER_QUEUES: ' llm , io ' }).WORKER_QUEUES).to.deep.equal(['io', 'llm']);
    expect(() => loadConfig({ WORKER_QUEUES: 'gpu' })).to.throw(ConfigError, /WORKER_QUEUES.*gpu/);
    expect(() => loadConfig({ WORKER_QUEUES: 'io,gpu' })).to.throw(ConfigError, /WORKER_QUEUES/);
    expect(() => loadConfig({ WORKER_QUEUES: ',' })).to.throw(ConfigError, /WORKER_QUEUES/);
  });

  it("the llm queue has WORKER_LLM_SLOTS slots, by default twice the local model server's slots or 16 for a remote endpoint", () => {
    expect(llmSlots(loadConfig({}))).to.equal(2);
    expect(llmSlots(loadConfig({ LLM_LOCAL_SLOTS: '3' }))).to.equal(6);
    expect(llmSlots(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'm' }))).to.equal(16);
    expect(queueTuning(loadConfig({ WORKER_LLM_SLOTS: '5' }), 'llm', 8 * GB)).to.deep.equal({
      maxConcurrentActivityTaskExecutions: 5,
    });
    expect(() => loadConfig({ WORKER_LLM_SLOTS: '-1' })).to.throw(ConfigError, /WORKER_LLM_SLOTS/);
  });
});
