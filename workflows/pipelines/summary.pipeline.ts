import { patched } from '@temporalio/workflow';
import { MODEL_CALLS_PER_JOB } from '../../core/jobs/fanout';
import { limiter, type Limiter } from '../fanout';
import { activitiesFor, modelRoute } from '../routing';
import type { SummaryJobType } from '../../core/jobs/job-params';
import type { PipelineContext } from './context';
import { SUMMARY_SLICES } from '../patches';
import { packWithin, SlicedSummary, type SummaryText } from './summary-slices';

/** The plan and the results read and write the session store and the job's texts: heartbeating store work. */
const storeWork = activitiesFor();

/** Per nesting level of the runs recorded before one limiter bounded the whole job (8 × 8 = 64 calls at once). */
const LEGACY_PARALLEL_CALLS = 8;

export { packWithin, type SummaryText } from './summary-slices';

/** The pool of the runs recorded before the job-wide bound: each nesting level its own 8, so 64 calls at once. */
async function legacyPool<T, R>(items: T[], fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LEGACY_PARALLEL_CALLS, items.length) }, worker));
  return out;
}

/**
 * The summaries over the session store (spec §4.5, §4.8, §4.9): job types `track_summary` (`mode` `summary` or
 * `summarize_all`), `event_summary` and `story`. Map-reduce within the model's context: the plan step fixes the
 * sessions (one per session, in the target language where there is one) and cuts each Markdown into pieces of at
 * most `chunk_chars`; every model call is its own activity over texts that fit in `chunk_chars` (a session's
 * pieces, then groups of summaries, merged level by level until one call holds them all). Texts live under the job,
 * never in history, and answered calls are journaled, so a restart repeats no call that answered. However the calls
 * nest, one limiter per job keeps at most `MODEL_CALLS_PER_JOB` of them in flight (on the llm queue, keyed by job).
 */
export async function summaryPipeline(ctx: PipelineContext<SummaryJobType>): Promise<Record<string, unknown>> {
  const { jobId, parameters } = ctx.input;
  const budget = parameters.chunk_chars;
  // Runs recorded before the job-wide bound: a pool per nesting level, on the io queue.
  const gate: Limiter | null = patched('bounded-fanout') ? limiter(MODEL_CALLS_PER_JOB) : null;
  const withModel = activitiesFor({ jobId, model: gate ? modelRoute(true) : 'io' });
  // Only the calls take a slot of the gate: the levels above them just wait for their calls (no slot held, no
  // deadlock).
  const pool = <T, R>(items: T[], fn: (t: T, i: number) => Promise<R>): Promise<R[]> =>
    gate ? Promise.all(items.map((t, i) => fn(t, i))) : legacyPool(items, fn);
  ctx.progress('plan', 5, 'Reading the session store');
  const plan = await storeWork.planSessionSummary({ jobId, jobType: ctx.input.jobType, parameters });
  ctx.log(
    'info',
    `${plan.sessions.length} sessions in ${plan.tracks.length} tracks; ${plan.sessions.reduce((n, s) => n + s.pieces, 0)} pieces of at most ${budget} characters`,
  );
  const total = plan.sessions.reduce((n, s) => n + s.pieces, 0) + plan.tracks.length + 1;
  let done = 0;
  const progressed = (calls: number) => {
    done += calls;
    ctx.progress('summarize', Math.min(95, 10 + Math.floor((85 * done) / total)), `${done} model calls done`);
  };
  if (gate && patched(SUMMARY_SLICES)) {
    // The calls in child workflows of a bounded size: the job's history stays small however many sessions.
    await new SlicedSummary(ctx.input, budget, progressed).run(plan);
    ctx.progress('results', 97, 'Writing the results');
    return (await storeWork.finishSessionSummary({ jobId, parameters, jobType: ctx.input.jobType })).results;
  }
  const call = async (output: string, inputs: string[], kind: string): Promise<SummaryText> => {
    const ask = () => withModel.summaryCall({ jobId, parameters, output, inputs, kind });
    const r = gate ? await gate.run(ask) : await ask();
    progressed(1);
    return { name: output, chars: r.chars };
  };
  /** Merges texts level by level until one call of `finalKind` holds them all. */
  const reduce = async (items: SummaryText[], output: string, finalKind: string): Promise<SummaryText> => {
    let cur = items;
    for (let level = 0; ; level++) {
      const groups = packWithin(cur, budget);
      if (groups.length === 1)
        return call(
          output,
          groups[0]!.map((t) => t.name),
          finalKind,
        );
      cur = await pool(groups, (g, n) =>
        call(
          `${output}-r${level}-${n}`,
          g.map((t) => t.name),
          'merge',
        ),
      );
    }
  };
  const mapKind = ctx.input.jobType === 'story' ? 'contribution' : 'session';
  const sessionTexts = await pool(plan.sessions, async (s, i) => {
    if (s.pieces === 1) return call(`s${i}`, [`m${i}p0`], mapKind);
    const parts = await pool(
      Array.from({ length: s.pieces }, (_, j) => j),
      (j) => call(`s${i}p${j}`, [`m${i}p${j}`], mapKind),
    );
    return reduce(parts, `s${i}`, 'merge');
  });

  const mode = String(parameters.mode ?? 'summary');
  if (ctx.input.jobType === 'track_summary' && mode !== 'summarize_all') await reduce(sessionTexts, 'final', 'track');
  else if (ctx.input.jobType === 'story') await reduce(sessionTexts, 'final', 'story');
  else if (ctx.input.jobType === 'event_summary') {
    const trackTexts = await pool(plan.tracks, (_, k) =>
      reduce(
        sessionTexts.filter((_t, i) => plan.sessions[i]!.track === k),
        `t${k}`,
        'track',
      ),
    );
    await reduce(trackTexts, 'final', 'event');
  }
  ctx.progress('results', 97, 'Writing the results');
  return (await storeWork.finishSessionSummary({ jobId, parameters, jobType: ctx.input.jobType })).results;
}
