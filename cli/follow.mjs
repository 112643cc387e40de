import { ApiError } from './client.mjs';

/**
 * Follows a job through its Server-Sent Events (`GET /api/jobs/{id}/events`): each progress event feeds the
 * progress display, the final event (`completed` or `failed`) ends it. A dropped stream is resumed with
 * `Last-Event-ID`; a stream that ends without a final event falls back to reading the job.
 * Answers `{ phase: 'completed', data }` or `{ phase: 'failed', error }`.
 */
export async function followJob(client, jobId, onProgress) {
  let last = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await client.send('GET', `/api/jobs/${encodeURIComponent(jobId)}/events`, {
      accept: 'text/event-stream',
      lastEventId: last,
    });
    const end = await readEvents(res, (ev) => {
      if (ev.id) last = Number(ev.id) || last;
      if (ev.event === 'processing') onProgress(ev.data);
      if (ev.event === 'completed' || ev.event === 'failed') return ev.data;
      return undefined;
    });
    if (end) return end;
    // Ended without a final event (a restart of the API, a proxy's timeout): is the job finished?
    const r = await client.call('GET', `/api/jobs/${encodeURIComponent(jobId)}`);
    const job = r.body?.data;
    if (job?.status === 'completed') return { phase: 'completed', data: job.results ?? {} };
    if (job?.status === 'failed') return { phase: 'failed', error: job.error };
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 200 * (attempt + 1))));
  }
  throw new ApiError(
    0,
    'STREAM_LOST',
    `the event stream of ${jobId} kept dropping; read it with: docproc get ${jobId}`,
  );
}

/** Parses an event stream; `handle` answers a value to stop with it. */
async function readEvents(res, handle) {
  const decoder = new TextDecoder();
  let buf = '';
  let ev = { data: '' };
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return undefined;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line === '') {
          if (ev.event || ev.data) {
            let data;
            try {
              data = JSON.parse(ev.data);
            } catch {
              data = ev.data;
            }
            const out = handle({ ...ev, data });
            if (out !== undefined) return out;
          }
          ev = { data: '' };
        } else if (!line.startsWith(':')) {
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'data') ev.data = ev.data ? `${ev.data}\n${val}` : val;
          else if (field === 'event' || field === 'id') ev[field] = val;
        }
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * The progress display on stderr: a bar redrawn in place on a terminal, one line per change otherwise
 * (`progress  45% Reading pages`), so logs and tests see every step.
 */
export function progressPrinter(stream = process.stderr) {
  let lastLine = '';
  const tty = Boolean(stream.isTTY);
  return {
    update(body) {
      const pct = Math.max(0, Math.min(100, Math.round(Number(body?.progress) || 0)));
      const msg = String(body?.message ?? '').slice(0, 60);
      if (tty) {
        const width = 30;
        const fill = Math.round((pct / 100) * width);
        stream.write(
          `\r[${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${String(pct).padStart(3)}% ${msg.padEnd(60)}`,
        );
        return;
      }
      const line = `progress ${String(pct).padStart(3)}% ${msg}`;
      if (line !== lastLine) stream.write(`${line}\n`);
      lastLine = line;
    },
    done() {
      if (tty) stream.write('\n');
    },
  };
}
