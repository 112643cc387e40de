/**
 * Maps `items` with at most `concurrency` calls of `fn` running at once, started in item order; results keep the
 * items' order. After the first failure no new item starts; the promise rejects with that failure once the running
 * calls have settled, so no work outlives the call (pass an AbortSignal to `fn` to stop running work early).
 *
 * Pure (no Node imports). Workflow code has its own bounded fan-out (workflows/fanout.ts): its slots can be shared
 * by several maps and its first failure rejects at once, which the commands of recorded histories depend on.
 */
export async function mapPool<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;
  const lane = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (err) {
        if (!failed) firstError = err;
        failed = true;
      }
    }
  };
  const lanes = Math.max(1, Math.min(Math.floor(concurrency) || 1, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failed) throw firstError;
  return results;
}
