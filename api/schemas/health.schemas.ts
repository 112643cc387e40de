import { z } from '../openapi';

const checkStatus = z
  .enum(['ok', 'degraded', 'unavailable'])
  .openapi('HealthState', { description: 'ok, degraded or unavailable (503).' });
const check = z.object({ status: checkStatus, message: z.string().optional() }).passthrough();

/** GET /api/health for a caller with the key (contract §10, §11): no envelope. */
export const healthBody = z
  .object({
    status: checkStatus,
    service: z.string(),
    version: z.string(),
    timestamp: z.string(),
    checks: z.object({
      temporal: check,
      storage: check,
      worker: check,
      providers: z.record(z.string(), check),
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
