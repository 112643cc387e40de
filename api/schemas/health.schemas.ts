import { z } from '../openapi';

const checkStatus = z
  .enum(['ok', 'degraded', 'unavailable'])
  .openapi('HealthState', { description: 'ok, degraded or unavailable (503).' });
/** One check of the report (api/services/health.ts): its state, why when not ok, and how long it took. */
const check = z.object({
  status: checkStatus,
  message: z.string().optional(),
  latency_ms: z.number().int().optional(),
});
/** A provider's entry (`llm`: api/services/llm-health.ts; `ocr`: api/services/ocr-health.ts). */
const providerCheck = check.extend({
  provider: z.string().optional(),
  model: z.string().optional(),
  vision_model: z.string().optional(),
  /** The host of the model's endpoint. */
  endpoint: z.string().optional(),
  /** The local model server's own health: its context, slots and queue. */
  context_size: z.number().int().optional(),
  slots: z.number().int().optional(),
  active: z.number().int().optional(),
  queued: z.number().int().optional(),
  queue_size: z.number().int().optional(),
  engine: z.string().optional(),
  /** The OCR languages installed: what `ocr_language` may ask for. */
  languages: z.array(z.string()).optional(),
});

/** GET /api/health for a caller with the key (contract §10, §11): no envelope. */
export const healthBody = z
  .object({
    status: checkStatus,
    service: z.string(),
    version: z.string(),
    timestamp: z.string(),
    checks: z.object({
      temporal: check.extend({ server_version: z.string().optional() }),
      storage: check.extend({ backend: z.enum(['local', 's3']) }),
      /** Pollers per task queue and kind (`<queue>:workflow`, `<queue>:activity`) when Temporal answered. */
      worker: check.extend({ pollers: z.record(z.string(), z.number().int()).optional() }),
      providers: z.record(z.string(), providerCheck),
      workflow: check.optional(),
    }),
  })
  .openapi('Health');

/** GET /api/health without the key (contract §11): the status alone, from the cached probe. */
export const healthStatusBody = z
  .object({ status: checkStatus })
  .strict()
  .openapi('HealthStatus', { description: 'The answer to a caller without the key: the status only.' });

/** Either answer: the full report with the key, the status alone without it. */
export const healthAnswer = z.union([healthBody, healthStatusBody]);

export const healthQuery = z.object({ probe: z.enum(['workflow']).optional() });

export const liveBody = z.object({ status: z.literal('ok'), timestamp: z.string() }).openapi('Liveness');
