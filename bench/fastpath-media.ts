/**
 * Section 5 of bench/fastpath.bench.ts (issue 24 for audio): the same `POST /api/audio/process` upload again, answered
 * by the API from the result cache without a job, beside the job path's hit (`wait_ms=0`, then `GET /api/jobs/{id}`
 * until completed, as a client that asks for a job waits) and the raw parts in the same run: the cache entry read
 * in-process, and the ffprobe the API runs on a missed upload (a hit is answered before it). Asserts nothing about
 * timing.
 */
import fs from 'node:fs';
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { BlobStore } from '../core/stores/blob-store';
import { peekCache } from '../core/stores/cache';
import { AUDIO_CACHE_OPERATION, audioCacheKey } from '../core/stores/cache-keys';
import { loadConfig } from '../core/config/config';
import { speechModelId } from '../core/config/speech-model';
import { probeMedia } from '../providers/media/probe';
import { SENTENCES, speak } from '../test/support/media/speech-samples';
import { envInt } from './support';

const HIT_N = envInt('BENCH_AUDIO_HIT_N', 100);
const JOB_HIT_N = envInt('BENCH_AUDIO_JOB_HIT_N', 20);
const RAW_N = envInt('BENCH_AUDIO_RAW_N', 100);

interface Reply {
  status: number;
  cache: string;
  ms: number;
  json: any;
}

function request(
  url: string,
  agent: http.Agent,
  opts: { method: string; headers?: http.OutgoingHttpHeaders; body?: Buffer },
) {
  const t0 = performance.now();
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request(url, { method: opts.method, agent, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any = null;
        try {
          json = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({
          status: res.statusCode ?? 0,
          cache: String(res.headers['x-cache'] ?? ''),
          ms: performance.now() - t0,
          json,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A multipart body (built once, sent many times) and its content type. */
async function multipart(file: string, fields: Record<string, string>): Promise<{ body: Buffer; type: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(fs.readFileSync(file))], { type: 'audio/wav' }), 'talk.wav');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { body: Buffer.from(await req.arrayBuffer()), type: req.headers.get('content-type')! };
}

export interface AudioHitFigures {
  lines: string[];
  direct: number[];
  viaJob: number[];
}

/**
 * Runs section 5 against the service at `base` (its blob store `store`, the LLM model `llmModel` it was given):
 * one miss (a real transcription), then `BENCH_AUDIO_HIT_N` direct hits, `BENCH_AUDIO_JOB_HIT_N` hits through a job,
 * and the raw parts. `line(label, times)` formats a p50/p99 line as the other sections do.
 */
export async function audioHits(
  base: string,
  store: BlobStore,
  tmp: string,
  agent: http.Agent,
  llmModel: string,
  line: (label: string, xs: number[]) => string,
): Promise<AudioHitFigures> {
  const wav = await speak(SENTENCES.en, 'en', tmp, 'bench-hit');
  const bytes = fs.readFileSync(wav);
  const fields = { source_language: 'en', target_language: 'en' };
  const form = await multipart(wav, fields);
  const post = (query = '') =>
    request(`${base}/api/audio/process${query}`, agent, {
      method: 'POST',
      headers: { 'content-type': form.type, 'content-length': form.body.length },
      body: form.body,
    });
  const first = await post();
  if (first.status !== 200 || first.cache !== 'miss')
    throw new Error(`audio: first request ${first.status} ${first.cache} ${JSON.stringify(first.json).slice(0, 300)}`);
  let bad = 0;
  for (let i = 0; i < 10; i++) await post();
  const direct: number[] = [];
  for (let i = 0; i < HIT_N; i++) {
    const r = await post();
    if (r.status !== 200 || r.cache !== 'hit' || r.json?.data?.process_id !== first.json.data.process_id) bad++;
    direct.push(r.ms);
  }
  // The job path's hit: the client asks for a job (wait_ms=0) and waits for it the way jobs.bench.ts does.
  const viaJob: number[] = [];
  for (let i = 0; i < JOB_HIT_N; i++) {
    const t0 = performance.now();
    const accepted = await post('?wait_ms=0');
    if (accepted.status !== 202) throw new Error(`audio wait_ms=0: ${accepted.status}`);
    const id = accepted.json.data.job_id as string;
    for (;;) {
      const r = await request(`${base}/api/jobs/${id}?wait=10`, agent, { method: 'GET' });
      const status = r.json?.data?.status;
      if (status === 'completed') {
        if (r.json.data.results?.from_cache !== true) bad++;
        break;
      }
      if (status === 'failed' || r.status !== 200) throw new Error(`audio job ${id}: ${JSON.stringify(r.json)}`);
    }
    viaJob.push(performance.now() - t0);
  }
  // Raw: the entry read in-process under the API's key, and ffprobe of the recording (what a miss costs first).
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const key = audioCacheKey(sha256, fields, { speechModel: speechModelId(loadConfig(process.env)), llmModel });
  if (!(await peekCache(store, AUDIO_CACHE_OPERATION, key))) throw new Error('audio: no cache entry under the key');
  const reads: number[] = [];
  const probes: number[] = [];
  for (let i = 0; i < RAW_N; i++) {
    let t = performance.now();
    await peekCache(store, AUDIO_CACHE_OPERATION, key);
    reads.push(performance.now() - t);
    t = performance.now();
    await probeMedia(wav);
    probes.push(performance.now() - t);
  }
  return {
    direct,
    viaJob,
    lines: [
      `5. POST /api/audio/process, the same ${(bytes.length / 1024).toFixed(0)} KB WAV upload again (a cache hit), sequential`,
      line('service: hit answered by the API (no job)', direct),
      line('service: hit through a job (wait_ms=0 + GET)', viaJob),
      line('raw: the cache entry read in-process', reads),
      line('raw: ffprobe of the upload (misses only)', probes),
      `unexpected answers: ${bad}`,
    ],
  };
}
