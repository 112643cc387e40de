import { ApplicationFailure } from '@temporalio/activity';
import { BlobNotFoundError, readBlobBuffer, readBlobJson, writeBlobJson } from '../core/stores/blob-store';
import { JOB_DEFAULTS, withDefaults } from '../core/jobs/job-defaults';
import type { SummaryJobType, SummaryParams } from '../core/jobs/job-params';
import type { JobResultData } from '../core/results/result-schemas';
import { resultPreview, writeJobResults, type JobFields } from '../core/results/job-results';
import { jobInternalKey, jobOutputKey, jobOutputPrefix } from '../core/stores/records';
import {
  listSessionRecords,
  readSessionMarkdown,
  sanitizeName,
  type SessionFilter,
  type SessionRecord,
} from '../core/stores/session-store';
import { languageName } from '../core/templates';
import type { LlmUsage } from '../domain/engines/llm';
import { UsageRecorder } from '../providers/llm';
import type { ActivityDeps } from './deps';
import { applyTemplate, chunkText, clip, requireModel } from './text-operations';
import { jobModel } from './model-journal';
import { fullParameters, heartbeating, runStep } from './job-steps';

/** A session as the summary plan holds it. */
interface PlannedSession {
  name: string;
  event: string;
  track: string;
  language: string;
  /** The header every piece of this session is sent with. */
  header: string;
  pieces: number;
}

interface SummaryPlan {
  sessions: PlannedSession[];
  tracks: string[];
}

/** One text a summary call wrote: the model's answer, its label as an input of later calls, the call's usage. */
interface SummaryOutput {
  label: string;
  text: string;
  usage: LlmUsage[];
}

/** A summary job's parameters, the answer's language in place (`withDefaults`). */
type Params = SummaryParams & (typeof JOB_DEFAULTS)['summary'];

const PLAN_STEP = 'summary-plan';
const outputKey = (jobId: string, name: string) => jobInternalKey(jobId, `summary/${name}.json`);
const pieceKey = (jobId: string, name: string) => jobInternalKey(jobId, `summary-pieces/${name}.txt`);
const label = (s: string) => (s.length > 120 ? `${s.slice(0, 119)}…` : s);
const labelled = (o: SummaryOutput) => (o.label ? `## ${o.label}\n\n${o.text}` : o.text);
/** Characters a map or merge answer may have: four fit in one call, so every merge level at least halves the texts. */
export const partLimit = (budget: number) => Math.max(150, Math.floor(budget / 4) - 130);
/** Characters the answer of the request (the track, event summary or story) may have. */
const FINAL_CHARS = 3000;

const notFound = {
  track_summary: ['TRACK_NOT_FOUND', 'track'],
  event_summary: ['EVENT_NOT_FOUND', 'event'],
  story: ['TOPIC_NOT_FOUND', 'topic'],
} as const;

/** The sessions a request covers, one per session: the record in the target language when there is one. */
function onePerSession(records: SessionRecord[], language: string): SessionRecord[] {
  const picked = new Map<string, SessionRecord>();
  for (const r of records) {
    const id = [r.event, r.track, r.filename].map((n) => sanitizeName(n)).join('\u0000');
    const seen = picked.get(id);
    if (!seen || (seen.language !== language && r.language === language)) picked.set(id, r);
  }
  return [...picked.values()];
}

function filterOf(jobType: string, p: Params): SessionFilter {
  if (jobType === 'track_summary') return { track: String(p.track) };
  if (jobType === 'event_summary') return { event: String(p.event) };
  return { topic: String(p.topic) };
}

function prompt(kind: string, p: Params, final: boolean, budget: number, context: string): string {
  const lang = languageName(p.target_language);
  const limit = final ? FINAL_CHARS : partLimit(budget);
  const only = 'Answer with the text only, no preamble.';
  switch (kind) {
    case 'session':
      return `Summarise the conference session below in ${lang}, in at most ${limit} characters: what it is about, its main points and conclusions. ${only}`;
    case 'contribution':
      return (
        `A story on the topic "${String(p.topic)}" is being written for ${String(p.target_group)}. Say in ${lang}, in at most ${limit} ` +
        `characters, what the conference session below contributes to it (facts, ideas, examples, quotes). ${only}`
      );
    case 'merge':
      return `Combine the partial summaries below into one summary in ${lang}, in at most ${limit} characters, keeping the main points. ${only}`;
    case 'track':
      return `Summarise the track "${context}" of a conference from the summaries of its sessions below, in ${lang}, in at most ${limit} characters: its themes, highlights and how the sessions relate. ${only}`;
    case 'event':
      return `Summarise the event "${String(p.event)}" from the summaries of its tracks below, in ${lang}, in at most ${limit} characters: what it covered and its highlights. ${only}`;
    case 'story':
      return (
        `Write a story on the topic "${String(p.topic)}" for ${String(p.target_group)} in ${lang}, in at most ${limit} characters, from what ` +
        `the conference sessions below contributed: engaging, accurate, naming the sessions it draws on. ${only}`
      );
    default:
      throw ApplicationFailure.nonRetryable(`Unknown summary kind '${kind}'.`, 'INTERNAL_ERROR', { kind });
  }
}

export function createSummaryActivities(deps: ActivityDeps) {
  const { store } = deps;
  const readPlan = (jobId: string) =>
    readBlobJson<SummaryPlan>(store, jobInternalKey(jobId, `steps/${PLAN_STEP}.json`));

  return {
    /**
     * Fixes the sessions a summary covers (kept under the job: a restart summarises the same ones) and cuts each
     * session's Markdown into pieces that fit one model call with their header. Answers what the workflow needs to
     * schedule the calls: per session its track's index and its number of pieces.
     */
    async planSessionSummary({
      jobId,
      jobType,
      parameters,
    }: {
      jobId: string;
      jobType: SummaryJobType;
      parameters: SummaryParams;
    }) {
      // Lists the session store and writes every piece: minutes for a large event, heartbeating throughout.
      return heartbeating(async () => {
        const { value: plan } = await runStep(store, jobId, PLAN_STEP, async (): Promise<SummaryPlan> => {
          const p = withDefaults('summary', await fullParameters(store, jobId, parameters));
          const budget = Number(p.chunk_chars);
          const language = p.target_language;
          const records = onePerSession(await listSessionRecords(store, filterOf(jobType, p)), language);
          const sessions: PlannedSession[] = [];
          for (const r of records) {
            // A record whose Markdown is gone (its job swept after RETENTION_DAYS) is left out.
            const markdown = await readSessionMarkdown(store, r).catch((e: unknown) => {
              if (e instanceof BlobNotFoundError) return null;
              throw e;
            });
            if (markdown === null) continue;
            const i = sessions.length;
            const header = `Session: ${label(r.session)}\nTrack: ${label(r.track)}\nEvent: ${label(r.event)}\n\n`;
            const pieces = chunkText(markdown, Math.max(200, budget - header.length));
            await Promise.all(
              pieces.map((text, j) =>
                store.put(pieceKey(jobId, `m${i}p${j}`), text, { mime: 'text/markdown; charset=utf-8' }),
              ),
            );
            sessions.push({
              name: r.session,
              event: r.event,
              track: r.track,
              language: r.language,
              header,
              pieces: pieces.length,
            });
          }
          if (!sessions.length) {
            const [code, field] = notFound[jobType as keyof typeof notFound] ?? ['NOT_FOUND', 'name'];
            throw ApplicationFailure.nonRetryable(`No sessions for the ${field} ${JSON.stringify(p[field])}.`, code, {
              [field]: p[field],
            });
          }
          return { sessions, tracks: [...new Set(sessions.map((x) => x.track))].sort((a, b) => a.localeCompare(b)) };
        });
        return {
          sessions: plan.sessions.map((s) => ({ track: plan.tracks.indexOf(s.track), pieces: s.pieces })),
          tracks: plan.tracks,
        };
      });
    },

    /**
     * One model call of a summary: `inputs` (pieces `m<i>p<j>` or earlier outputs), which the workflow packed within
     * `chunk_chars`, to the text `output`. The request's own answer (`final`) takes the template when one was given.
     */
    async summaryCall({
      jobId,
      parameters,
      output,
      inputs,
      kind,
    }: {
      jobId: string;
      parameters: SummaryParams;
      output: string;
      inputs: string[];
      kind: string;
    }) {
      const existing = await readBlobJson<SummaryOutput>(store, outputKey(jobId, output)).catch(() => null);
      if (existing) return { chars: labelled(existing).length };
      const p = withDefaults('summary', await fullParameters(store, jobId, parameters));
      const plan = await readPlan(jobId);
      const budget = Number(p.chunk_chars);
      const texts: string[] = [];
      for (const name of inputs) {
        const m = /^m(\d+)p(\d+)$/.exec(name);
        if (m) {
          const piece = (await readBlobBuffer(store, pieceKey(jobId, name))).toString('utf8');
          texts.push(plan.sessions[Number(m[1])]!.header + piece);
        } else texts.push(labelled(await readBlobJson<SummaryOutput>(store, outputKey(jobId, name))));
      }
      const user = texts.join('\n\n');
      const final = output === 'final';
      const trackOf = /^t(\d+)$/.exec(output);
      const context = trackOf ? plan.tracks[Number(trackOf[1])]! : String(p.track ?? '');
      const llm = requireModel(jobModel(deps.llm, store, jobId), kind);
      let text: string;
      const usage: LlmUsage[] = [];
      if (final && typeof p.template === 'string' && p.template) {
        const r = await applyTemplate(llm, {
          text: user,
          template: p.template,
          target_language: p.target_language,
          context: {
            event: p.event ?? [...new Set(plan.sessions.map((s) => s.event))].join(', '),
            ...(p.track !== undefined ? { track: p.track } : {}),
            ...(p.topic !== undefined ? { topic: p.topic, target_group: p.target_group } : {}),
          },
        });
        text = r.text;
        usage.push(...r.usages);
      } else {
        const r = await llm.chatText({
          purpose: `summary-${kind}`,
          system: prompt(kind, p, final, budget, context),
          user,
        });
        usage.push(r.usage);
        text = final ? r.text.trim() : clip(r.text.trim(), partLimit(budget));
      }
      const session = /^s(\d+)(?:p(\d+))?$/.exec(output);
      const own = session
        ? plan.sessions[Number(session[1])]!.name +
          (session[2] !== undefined ? ` (part ${Number(session[2]) + 1})` : '')
        : trackOf
          ? context
          : '';
      const out: SummaryOutput = { label: label(own), text, usage };
      await writeBlobJson(store, outputKey(jobId, output), out);
      return { chars: labelled(out).length };
    },

    /** The request's `data` from the outputs, written as the job's results; a Markdown copy as the job's file. */
    async finishSessionSummary({
      jobId,
      parameters,
      jobType,
    }: {
      jobId: string;
      parameters: SummaryParams;
      jobType: SummaryJobType;
    }) {
      // Reads every summary the calls wrote and writes the results: heartbeating throughout.
      return heartbeating(async () => {
        const p = withDefaults('summary', await fullParameters(store, jobId, parameters));
        const plan = await readPlan(jobId);
        const text = async (name: string) => (await readBlobJson<SummaryOutput>(store, outputKey(jobId, name))).text;
        const perSession = await Promise.all(
          plan.sessions.map(async (s, i) => ({ name: s.name, summary: await text(`s${i}`) })),
        );
        // Each type's route sets what it summarises (`track`, `event`, `topic` and `target_group`): hence the `!`.
        let data: JobResultData<SummaryJobType>;
        let markdown: string;
        if (jobType === 'track_summary' && p.mode === 'summarize_all') {
          data = { track_name: p.track!, summaries: perSession.map((s) => ({ session: s.name, summary: s.summary })) };
          markdown = perSession.map((s) => `## ${s.name}\n\n${s.summary}`).join('\n\n');
        } else if (jobType === 'track_summary') {
          const summary = await text('final');
          data = { track_name: p.track!, summary, sessions: perSession, session_count: plan.sessions.length };
          markdown = summary;
        } else if (jobType === 'event_summary') {
          const summary = await text('final');
          const tracks = await Promise.all(
            plan.tracks.map(async (name, k) => ({
              name,
              session_count: plan.sessions.filter((s) => s.track === name).length,
              summary: await text(`t${k}`),
            })),
          );
          data = { event_name: p.event!, summary, tracks, total_sessions: plan.sessions.length };
          markdown = summary;
        } else {
          const story = await text('final');
          data = {
            topic: p.topic!,
            target_group: p.target_group!,
            story,
            sessions_used: perSession.map((s) => ({ name: s.name, contribution: s.summary })),
          };
          markdown = story;
        }
        const usage = new UsageRecorder();
        for (const key of await store.listKeys(jobInternalKey(jobId, 'summary/'))) {
          for (const u of (await readBlobJson<SummaryOutput>(store, key)).usage) usage.record(u);
        }
        await store.put(jobOutputKey(jobId, 'summary.md'), markdown, { mime: 'text/markdown; charset=utf-8' });
        const job: JobFields = {
          structured_data: {
            extracted_text: markdown,
            metadata: { job_type: jobType, session_count: plan.sessions.length, track_count: plan.tracks.length },
          },
          assets: [jobOutputKey(jobId, 'summary.md')],
          target_dir: jobOutputPrefix(jobId).slice(0, -1),
          llm_info: usage.summary(),
          from_cache: false,
        };
        await writeJobResults(store, jobId, data, job);
        return { results: resultPreview(job) };
      });
    },
  };
}
