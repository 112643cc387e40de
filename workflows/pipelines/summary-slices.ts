import { executeChild } from '@temporalio/workflow';
import type { SummaryJobType } from '../../core/jobs/job-params';
import type { JobInput } from '../definitions';
import { summaryCallsWorkflow, type SummaryCall } from '../summary-calls.workflow';

/**
 * Model calls per child workflow (`summaryCallsWorkflow`): a child's history stays under about 2,000 events (three
 * per activity and the workflow tasks between them), and the job's own history grows by about ten events per slice
 * (start, started, completed and their workflow tasks), not by six or so per call.
 */
export const SUMMARY_SLICE_CALLS = 250;

/** A text the activities keep under the job: its name and its length as an input of a later call. */
export interface SummaryText {
  name: string;
  chars: number;
}

/**
 * Greedy packing in order: each group's texts (with a two-character separator each) fit in `budget`. A group takes at
 * least two texts, so merging always ends (summaries are bounded to a quarter of the budget, so two always fit).
 */
export function packWithin(items: SummaryText[], budget: number): SummaryText[][] {
  const groups: SummaryText[][] = [];
  let cur: SummaryText[] = [];
  let size = 0;
  for (const it of items) {
    if (cur.length > 1 && size + it.chars + 2 > budget) {
      groups.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(it);
    size += it.chars + 2;
  }
  if (cur.length) groups.push(cur);
  return groups;
}

/** Texts to merge into one text named `output`, whose last call is of `finalKind`. */
interface Reduction {
  items: SummaryText[];
  output: string;
  finalKind: string;
}

const names = (g: SummaryText[]) => g.map((t) => t.name);

/** The summary plan as the workflow holds it (`planSessionSummary`). */
export interface SummaryPlanView {
  sessions: { track: number; pieces: number }[];
  tracks: string[];
}

/**
 * The model calls of a summary job, level by level, each level's independent calls in child workflows of at most
 * `SUMMARY_SLICE_CALLS` (one after the other, so the job keeps at most `MODEL_CALLS_PER_JOB` calls in flight): the
 * job's history grows with the number of slices, not of calls. The outputs are those the job always wrote (`s<i>`,
 * `s<i>p<j>`, `<output>-r<level>-<n>`, `t<k>`, `final`), so `finishSessionSummary` reads them as before.
 */
export class SlicedSummary {
  private seq = 0;

  constructor(
    private readonly input: JobInput<SummaryJobType>,
    private readonly budget: number,
    private readonly onDone: (calls: number) => void,
  ) {}

  /** Every call of the summary: the pieces, each session to one text, then the job type's merges. */
  async run(plan: SummaryPlanView): Promise<void> {
    const { jobType, parameters } = this.input;
    const mapKind = jobType === 'story' ? 'contribution' : 'session';
    const maps: SummaryCall[] = plan.sessions.flatMap((s, i) =>
      s.pieces === 1
        ? [{ output: `s${i}`, inputs: [`m${i}p0`], kind: mapKind }]
        : Array.from({ length: s.pieces }, (_, j) => ({ output: `s${i}p${j}`, inputs: [`m${i}p${j}`], kind: mapKind })),
    );
    const texts = new Map((await this.calls(maps)).map((t) => [t.name, t]));
    const multi = plan.sessions.flatMap((s, i) =>
      s.pieces > 1
        ? [
            {
              items: Array.from({ length: s.pieces }, (_, j) => texts.get(`s${i}p${j}`)!),
              output: `s${i}`,
              finalKind: 'merge',
            },
          ]
        : [],
    );
    for (const t of await this.reduceAll(multi)) texts.set(t.name, t);
    const sessionTexts = plan.sessions.map((_, i) => texts.get(`s${i}`)!);

    const mode = String(parameters.mode ?? 'summary');
    if (jobType === 'track_summary' && mode !== 'summarize_all')
      await this.reduceAll([{ items: sessionTexts, output: 'final', finalKind: 'track' }]);
    else if (jobType === 'story') await this.reduceAll([{ items: sessionTexts, output: 'final', finalKind: 'story' }]);
    else if (jobType === 'event_summary') {
      const trackTexts = await this.reduceAll(
        plan.tracks.map((_, k) => ({
          items: sessionTexts.filter((_t, i) => plan.sessions[i]!.track === k),
          output: `t${k}`,
          finalKind: 'track',
        })),
      );
      await this.reduceAll([{ items: trackTexts, output: 'final', finalKind: 'event' }]);
    }
  }

  /** Reduces each list of texts to one text, level by level; the calls of every list's level run together. */
  private async reduceAll(reductions: Reduction[]): Promise<SummaryText[]> {
    const state = reductions.map((r) => ({ ...r, level: 0, result: undefined as SummaryText | undefined }));
    for (;;) {
      const calls: SummaryCall[] = [];
      const shape: { r: (typeof state)[number]; groups: number }[] = [];
      for (const r of state) {
        if (r.result) continue;
        const groups = packWithin(r.items, this.budget);
        if (groups.length === 1) calls.push({ output: r.output, inputs: names(groups[0]!), kind: r.finalKind });
        else
          groups.forEach((g, n) =>
            calls.push({ output: `${r.output}-r${r.level}-${n}`, inputs: names(g), kind: 'merge' }),
          );
        shape.push({ r, groups: groups.length });
      }
      if (!calls.length) return state.map((r) => r.result!);
      const done = await this.calls(calls);
      let k = 0;
      for (const { r, groups } of shape) {
        if (groups === 1) r.result = done[k]!;
        else {
          r.items = done.slice(k, k + groups);
          r.level += 1;
        }
        k += groups;
      }
    }
  }

  /** Independent calls, in child workflows of at most SUMMARY_SLICE_CALLS calls, one slice after the other. */
  private async calls(calls: SummaryCall[]): Promise<SummaryText[]> {
    const { jobId, parameters, run } = this.input;
    const out: SummaryText[] = [];
    for (let i = 0; i < calls.length; i += SUMMARY_SLICE_CALLS) {
      const slice = calls.slice(i, i + SUMMARY_SLICE_CALLS);
      this.seq += 1;
      const chars = await executeChild(summaryCallsWorkflow, {
        workflowId: `${jobId}-summary-${run}-${this.seq}`,
        args: [{ jobId, parameters, calls: slice }],
      });
      slice.forEach((c, n) => out.push({ name: c.output, chars: chars[n]! }));
      this.onDone(slice.length);
    }
    return out;
  }
}
