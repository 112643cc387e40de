import { CancelledFailure } from '@temporalio/common';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import type { Context } from '@temporalio/activity';
import { observeActivity } from '../core/runtime/metrics';

class ActivityTimer implements ActivityInboundCallsInterceptor {
  constructor(private readonly ctx: Context) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const started = performance.now();
    const { activityType, taskQueue } = this.ctx.info;
    let outcome: 'ok' | 'error' | 'cancelled' = 'ok';
    try {
      return await next(input);
    } catch (err) {
      outcome = err instanceof CancelledFailure || this.ctx.cancellationSignal.aborted ? 'cancelled' : 'error';
      throw err;
    } finally {
      observeActivity(activityType, taskQueue, outcome, (performance.now() - started) / 1000);
    }
  }
}

/**
 * Times every activity attempt into `docproc_activity_duration_seconds` (core/runtime/metrics.ts), by activity type, task
 * queue and outcome. Registered on every worker next to the error boundary: `interceptors: { activity: [activityTimer,
 * errorBoundary] }`.
 */
export const activityTimer: ActivityInterceptorsFactory = (ctx) => ({ inbound: new ActivityTimer(ctx) });
