/** The one wait of the tests and benchmarks: poll a check until it holds, with a deadline that names what it waited for. */

/** How a wait goes. */
export interface WaitOptions {
  /** How long the check may take to hold before the wait fails (ms). Default 60 s. */
  timeoutMs?: number;
  /** The pause between two checks (ms); 0 for a check that waits by itself (a long poll). Default 250. */
  everyMs?: number;
  /**
   * A check that throws: `retry` (the default) takes it as "not yet" and names the last error if the wait times out;
   * `throw` ends the wait with that error at once.
   */
  errors?: 'retry' | 'throw';
}

/** What a wait that ran out of time throws: the check never held within `timeoutMs`. */
export class WaitTimeout extends Error {
  override name = 'WaitTimeout';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `check` until it answers something other than undefined or false, and answers that. After `timeoutMs`
 * (the third argument, or `timeoutMs` of the options) it throws a `WaitTimeout` naming `what` (a function is asked
 * then, so the message can tell the state the wait ended in).
 */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string | (() => string),
  limits: number | WaitOptions = {},
  everyMs?: number,
): Promise<T> {
  const opts: WaitOptions = typeof limits === 'number' ? { timeoutMs: limits, everyMs } : limits;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const pause = opts.everyMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      if (opts.errors === 'throw') throw e;
      lastErr = e;
    }
    if (Date.now() > deadline) {
      const named = typeof what === 'function' ? what() : what;
      throw new WaitTimeout(
        `timed out after ${timeoutMs} ms waiting for ${named}${lastErr ? `: ${String(lastErr)}` : ''}`,
      );
    }
    if (pause > 0) await sleep(pause);
  }
}

/**
 * Whether `cond` comes to hold within `timeoutMs` (checked every `everyMs`): true as soon as it does, false at the
 * deadline, for a test that asserts the outcome itself. An error of `cond` ends the wait with it.
 */
export async function holds(cond: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  try {
    return await waitFor(async () => (await cond()) || undefined, 'a condition', {
      timeoutMs,
      everyMs,
      errors: 'throw',
    });
  } catch (e) {
    if (e instanceof WaitTimeout) return false;
    throw e;
  }
}
