import type { Client } from '@temporalio/client';
import type { BlobStore } from '../../core/stores/blob-store';
import { putSessionRecord } from '../../core/stores/session-store';
import { message } from './servers/llm-env';
import type { LlmServer } from './servers/llm-server';
import { sessionRecord } from './sessions';

// Many sessions of one event, written straight into the session store, and the histories of the summary job over
// them (the job's own and its children's): test/integration/summary-history.test.ts and bench/summary-history.bench.ts.

/** Seeds `sessions` sessions of `event` in `tracks` tracks (a short Markdown each: one piece per session). */
export async function seedEvent(store: BlobStore, event: string, sessions: number, tracks: number): Promise<void> {
  const one = async (i: number) => {
    const rec = sessionRecord({ event, track: `Track ${i % tracks}`, session: `Session ${i}`, language: 'en' });
    await store.put(rec.markdown_key, `# Session ${i}\n\n${'Maps, routing and open data in detail. '.repeat(12)}\n`, {
      mime: 'text/markdown',
    });
    await putSessionRecord(store, rec);
  };
  for (let i = 0; i < sessions; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, sessions - i) }, (_, k) => one(i + k)));
}

/** A model that answers at once: a short summary naming what it was given; templates get the default fields. */
export function summarizingModel(llm: LlmServer): void {
  llm.respond((req) => {
    if (req.json?.response_format) return undefined;
    const names = [...message(req, 'user').matchAll(/^(?:Session: |## )(.+)$/gm)].map((m) => m[1]);
    return {
      content: `About ${names.slice(0, 3).join('; ') || 'the sessions'}. ${'Some words of summary. '.repeat(6)}`,
    };
  });
}

/** Events and JSON bytes of one workflow's history (every run of it). */
export interface HistoryFigures {
  workflowId: string;
  events: number;
  bytes: number;
}

/** The history of the job's workflow and those of the child workflows it started (their ids from its history). */
export async function summaryHistories(
  client: Client,
  jobId: string,
): Promise<{ job: HistoryFigures; children: HistoryFigures[] }> {
  const figures = async (workflowId: string): Promise<HistoryFigures & { childIds: string[] }> => {
    const h = await client.workflow.getHandle(workflowId).fetchHistory();
    const events = h.events ?? [];
    const childIds = events
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter((id): id is string => !!id);
    return { workflowId, events: events.length, bytes: Buffer.byteLength(JSON.stringify(h)), childIds };
  };
  const { childIds, ...job } = await figures(jobId);
  const children: HistoryFigures[] = [];
  for (const id of childIds) {
    const { childIds: _c, ...f } = await figures(id);
    void _c;
    children.push(f);
  }
  return { job, children };
}
