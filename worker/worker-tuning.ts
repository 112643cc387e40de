import fs from 'node:fs';
import os from 'node:os';
import type { WorkerOptions, WorkerTuner } from '@temporalio/worker';
import { llmSlots, mediaSlots, type Config, type WorkerQueueKind } from '../core/config/config';

export { llmSlots, mediaSlots } from '../core/config/config';

type TuningConfig = Pick<
  Config,
  | 'IO_CONCURRENCY'
  | 'MEDIA_CONCURRENCY'
  | 'WORKER_MAX_MEMORY_MB'
  | 'WORKER_LLM_SLOTS'
  | 'llmProvider'
  | 'LLM_LOCAL_SLOTS'
>;

/**
 * The slot and cache options of one of the three Workers (`io`: workflows and I/O activities; `media`: CPU work;
 * `llm`: model calls).
 */
export type QueueTuning = Pick<
  WorkerOptions,
  'tuner' | 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows'
>;

const WORKFLOW_TASK_SLOTS = 40;
const LOCAL_ACTIVITY_SLOTS = 100;
const MAX_CACHED_WORKFLOWS = 1000;

/**
 * The memory this process may use, as the SDK's resource sampler sees it: the cgroup's limit when the process runs
 * in a container with one (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`), else the machine's memory.
 */
export function memoryLimitBytes(read: (p: string) => string = (p) => fs.readFileSync(p, 'utf8')): number {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const n = Number(read(file).trim());
      // v1 reports "no limit" as a huge number near 2^63.
      if (Number.isFinite(n) && n > 0 && n < os.totalmem()) return n;
    } catch {
      // no such cgroup file: not in a limited container
    }
  }
  return os.totalmem();
}

/**
 * Slots and workflow cache of one Worker. Without `WORKER_MAX_MEMORY_MB`: fixed slots (`IO_CONCURRENCY`, media
 * slots, llm slots, 40 workflow tasks on io) and 1,000 cached workflows. With it, activity slots come from the SDK's
 * resource-based
 * tuner: a slot is handed out (up to the same maximum) only while the memory in use stays under the budget as a
 * share of {@link memoryLimitBytes} (the cgroup's usage, so engine child processes — tesseract, ffmpeg, the speech
 * engines — count too; on a machine without a cgroup limit, the machine's use). Running activities are never
 * stopped: the bound applies to new work. The io Worker's workflow cache is cut to a quarter of the budget at the
 * SDK's reference figure of about 1 MB per cached workflow (at least 10, at most 1,000).
 */
export function queueTuning(config: TuningConfig, queue: WorkerQueueKind, limitBytes: number): QueueTuning {
  const activitySlots =
    queue === 'io' ? config.IO_CONCURRENCY : queue === 'llm' ? llmSlots(config) : mediaSlots(config);
  const budgetMb = config.WORKER_MAX_MEMORY_MB;
  const cache = queue === 'io' ? MAX_CACHED_WORKFLOWS : undefined;
  if (!budgetMb) {
    return {
      maxConcurrentActivityTaskExecutions: activitySlots,
      ...(queue === 'io'
        ? { maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS, maxCachedWorkflows: cache }
        : {}),
    };
  }
  const targetMemoryUsage = Math.min(0.95, Math.max(0.05, (budgetMb * 1024 * 1024) / limitBytes));
  const tuner: WorkerTuner = {
    workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: WORKFLOW_TASK_SLOTS },
    activityTaskSlotSupplier: {
      type: 'resource-based',
      minimumSlots: 1,
      maximumSlots: activitySlots,
      rampThrottle: queue === 'io' ? '50ms' : '500ms',
      // CPU is bounded by the slot maximum (about one per core on media), not by the tuner.
      tunerOptions: { targetMemoryUsage, targetCpuUsage: 1 },
    },
    localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: LOCAL_ACTIVITY_SLOTS },
    nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
  };
  return {
    tuner,
    ...(queue === 'io'
      ? { maxCachedWorkflows: Math.min(MAX_CACHED_WORKFLOWS, Math.max(10, Math.floor(budgetMb / 4))) }
      : {}),
  };
}
