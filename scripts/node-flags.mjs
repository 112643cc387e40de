// The Node flags a process of the stack starts with, the same wherever it is launched (`npm run cluster`, the
// image's entry point, the benches and tests that run the layouts). Plain Node, no dependency.
//
// A worker that polls no media queue (the io worker of the cluster and compose layouts: workflows, downloads,
// bookkeeping, model calls) keeps V8's young generation small. Its work is I/O: Buffers of downloads and store copies
// and short-lived objects of workflow tasks, which a 4 MiB semi-space collects as soon as they die. At V8's default
// (16 MiB) the young generation grows to its largest and stays there, about 30 MB of RSS that holds nothing: an io
// worker under 4 × 500 MB URL downloads peaked at 318-336 MB with the default and 282-283 MB with 4 MiB, idle at
// 259-278 and 238-241 MB (bench/download-memory.bench.ts, 2026-12-03). Media workers (PDF layout, OCR
// post-processing: allocation-heavy compute) and a worker of every queue keep V8's default. NODE_OPTIONS still
// applies on top (a later flag wins).

/** The semi-space of a worker that polls no media queue, MiB. */
export const IO_WORKER_SEMI_SPACE_MB = 4;

/** Whether a WORKER_QUEUES value (unset, `all`, `both` or a list) includes the media queue. */
export function pollsMedia(queues) {
  const s = String(queues ?? '')
    .trim()
    .toLowerCase();
  if (s === '' || s === 'all' || s === 'both') return true;
  return s
    .split(',')
    .map((q) => q.trim())
    .includes('media');
}

/** The flags before `--import tsx` for the process `name` (`api` or `worker`) with WORKER_QUEUES `queues`. */
export function nodeFlags(name, queues) {
  return name === 'worker' && !pollsMedia(queues) ? [`--max-semi-space-size=${IO_WORKER_SEMI_SPACE_MB}`] : [];
}
