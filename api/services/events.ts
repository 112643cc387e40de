import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { resultData } from '../../core/results/job-results';
import { completedBody, failedBody, progressBody } from '../../core/jobs/webhooks';
import type { JobEvent, JobState } from '../../workflows/definitions';
import { isTerminal } from '../../workflows/job-state';
import type { JobService } from './jobs';

/** The body of an event, the same as its webhook. */
function eventBody(s: JobState, ev: JobEvent): unknown {
  const clientJobId = s.input?.webhook?.jobId;
  if (ev.phase === 'processing') return progressBody(s.job_id, clientJobId, ev.progress, ev.message);
  if (ev.phase === 'completed') return completedBody(s.job_id, clientJobId, ev.message, resultData(s.results));
  return failedBody(s.job_id, clientJobId, ev.message, ev.error ?? s.error);
}

/**
 * Server-Sent Events of a job: every event after `Last-Event-ID`, then each new one as it happens, until the final
 * one. A comment line every 15 s keeps proxies from closing the stream.
 */
export function streamJobEvents(ctx: Context, jobs: JobService, first: JobState, lastEventId: number): void {
  const out = new PassThrough();
  ctx.status = 200;
  ctx.type = 'text/event-stream; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = out;
  ctx.req.socket.setNoDelay(true);
  let closed = false;
  const close = () => {
    closed = true;
    out.end();
  };
  ctx.req.on('close', () => (closed = true));
  void (async () => {
    let s = first;
    let last = lastEventId;
    out.write(`retry: 2000\n\n`);
    try {
      while (!closed) {
        for (const ev of s.events) {
          if (ev.id <= last) continue;
          // A finished job read from its record carries its full results for the final event.
          if (ev.phase !== 'processing' && isTerminal(s) && !s.results && ev.phase === 'completed') {
            s = (await jobs.readRecord(s.job_id)) ?? s;
          }
          out.write(`id: ${ev.id}\nevent: ${ev.phase}\ndata: ${JSON.stringify(eventBody(s, ev))}\n\n`);
          last = ev.id;
        }
        if (isTerminal(s)) {
          if (s.events.every((e) => e.phase === 'processing')) {
            // A job failed before it ran (fail-all): no event was recorded; send its final state.
            out.write(
              `event: ${s.status}\ndata: ${JSON.stringify({ phase: s.status, process: { id: s.job_id }, error: s.error })}\n\n`,
            );
          }
          break;
        }
        const before = s.version;
        s = await jobs.waitForChange(s, 15);
        if (s.version === before && !isTerminal(s)) out.write(`: keep-alive\n\n`);
      }
    } catch {
      out.write(
        `event: error\ndata: ${JSON.stringify({ message: 'The event stream was interrupted; reconnect with Last-Event-ID.' })}\n\n`,
      );
    } finally {
      close();
    }
  })();
}
