import type { Context } from 'koa';
import { AppError } from '../../core/errors';

/** Seconds a refused client is asked to wait (`Retry-After`): a heavy request usually ends within seconds. */
const HEAVY_RETRY_AFTER_SECONDS = 2;

/**
 * A bound on concurrent heavy requests (uploads processed synchronously and the results they answer): past it a
 * request is refused at once with 429 `RATE_LIMITED` and `Retry-After` (contract §1) instead of the process growing.
 * A request holds its slot until its response is closed (sent, or the client went away), so a streamed answer
 * counts until its last byte. `max` 0: no bound.
 */
export class RequestBound {
  private active = 0;

  constructor(readonly max: number) {}

  get inUse(): number {
    return this.active;
  }

  /** Takes a slot for this request (once per request), or throws 429. */
  enter(ctx: Context): void {
    if (this.max <= 0 || ctx.state.heavySlot) return;
    if (this.active >= this.max) {
      ctx.set('Retry-After', String(HEAVY_RETRY_AFTER_SECONDS));
      throw new AppError(
        'RATE_LIMITED',
        `Too many requests are being processed (at most ${this.max} at once); retry shortly.`,
        {
          limit: this.max,
          retry_after_seconds: HEAVY_RETRY_AFTER_SECONDS,
        },
      );
    }
    this.active += 1;
    ctx.state.heavySlot = true;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active -= 1;
    };
    if (ctx.res.writableFinished || ctx.res.destroyed) release();
    else ctx.res.once('close', release);
  }
}
