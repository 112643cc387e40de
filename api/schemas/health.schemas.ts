import { z } from '../openapi';

const checkStatus = z.enum(['ok', 'degraded', 'unavailable']);
const check = z.object({ status: checkStatus, message: z.string().optional() }).passthrough();

/** GET /api/health (contract §10): no envelope. */
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

export const healthQuery = z.object({ probe: z.enum(['workflow']).optional() });

export const liveBody = z.object({ status: z.literal('ok'), timestamp: z.string() }).openapi('Liveness');
