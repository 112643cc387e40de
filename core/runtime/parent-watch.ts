/**
 * Calls `onOrphaned` when the process that launched this one (named by `parentPid`) is gone, so the api and worker
 * never outlive `npm start` even when it is killed without passing a signal on.
 */
export function watchParent(parentPid: number | undefined, onOrphaned: () => void, everyMs = 1000): void {
  if (!parentPid) return;
  const timer = setInterval(() => {
    if (process.ppid !== parentPid) {
      clearInterval(timer);
      onOrphaned();
    }
  }, everyMs);
  timer.unref();
}
