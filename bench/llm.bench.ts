/**
 * The local language model through the service against the same requests straight to node-llama-cpp, in one run:
 * a template fill of a one-page text and a summary of a 1,500-word text. Prints wall times, the overhead ratio,
 * tokens/s and the model server's peak RSS; asserts nothing about timing.
 *
 *   npm run bench -- llm        (provisions the engines and the model first)   or   npx tsx bench/llm.bench.ts
 *
 * SERVICE: a Temporal dev server (temp SQLite, WAL, headless), the local model server `llm-server/main.ts` and the
 * real `worker/main.ts` + `api/main.ts` processes as `npm start` runs them; each operation is a job (`POST /api/jobs/`,
 * then `GET /api/jobs/{id}?wait=30` until it ends), `use_cache: false`. Between the worker and the model server sits
 * a pass-through recorder (127.0.0.1, it adds well under a millisecond) that keeps every chat request body.
 * RAW: the bench process loads the same GGUF with node-llama-cpp (same context size and thread count as the server)
 * and sends each recorded request (messages, JSON schema grammar, max_tokens, temperature) with `LlamaChat`, one
 * after the other, while the service is idle. Overhead = service wall time / raw wall time of the same calls.
 * Knobs: BENCH_LLM_ROUNDS (1): service+raw rounds, each on a text marked with its round (so the model server
 * cannot reuse the previous round's prompt); each round's ratio is printed and the best of each side compared.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { getLlama, LlamaChat, LlamaLogLevel, type ChatHistoryItem } from 'node-llama-cpp';
import { loadConfig } from '../core/config/config';
import { defaultThreads } from '../providers/llm/local/engine';
import { freePort, startLocalLlm, startTemporalDev, stopChild } from '../scripts/services.mjs';
import { ROOT } from '../test/support/servers/processes';
import { startService, stopService } from './service';
import { cleanupRegistry, envInt, out, procMem, secs, temporalBinary } from './support';

const ROUNDS = envInt('BENCH_LLM_ROUNDS', 1);
const MODEL_PATH = loadConfig({
  LLM_LOCAL_MODEL_PATH: process.env.LLM_LOCAL_MODEL_PATH,
  DOCPROC_CACHE_DIR: process.env.DOCPROC_CACHE_DIR,
}).localLlm.modelPath;
const CONTEXT = 4096;
const THREADS = defaultThreads(os.availableParallelism());

const PAGE = [
  'Protokoll der Lenkungskreissitzung „Neubau Betriebshof Nord“ vom 7. Oktober 2025, 10:00 bis 11:30 Uhr, ' +
    'Rathaus Freiburg, Raum 2.14.',
  'Anwesend: Dr. Miriam Keller (Vorsitz, Amt für Verkehr), Thomas Brandt (Stadtwerke), Sabine Yilmaz (Kämmerei), ' +
    'Peter Lorenz (Bauleitung), Julia Hoffmann (Protokoll).',
  'TOP 1: Stand der Bauarbeiten. Herr Lorenz berichtete, dass der Rohbau der Wagenhalle zu 80 % fertig ist. Die ' +
    'Dachkonstruktion verzögert sich um drei Wochen, weil ein Zulieferer Stahlträger zu spät geliefert hat. Die ' +
    'Fertigstellung der Halle ist nun für Ende Februar 2026 geplant.',
  'TOP 2: Kosten. Frau Yilmaz stellte die aktualisierte Kostenschätzung vor: 41,3 Millionen Euro statt der ' +
    'bewilligten 38,9 Millionen Euro. Die Mehrkosten entstehen vor allem durch gestiegene Stahlpreise und ' +
    'zusätzliche Bodenuntersuchungen. Der Lenkungskreis bittet die Kämmerei, bis zum 15. November eine Vorlage für ' +
    'den Gemeinderat zu erstellen.',
  'TOP 3: Betrieb. Herr Brandt erläuterte, dass die Stadtwerke ab März 2026 zwölf Straßenbahnen im neuen ' +
    'Betriebshof abstellen wollen. Das Personal für die Werkstatt wird ab Januar eingestellt; sechs von zehn ' +
    'Stellen sind bereits besetzt.',
  'TOP 4: Anwohner. Es gab Beschwerden über Baulärm am Samstag. Dr. Keller sagte zu, dass samstags künftig erst ' +
    'ab 9 Uhr gearbeitet wird. Eine Informationsveranstaltung für Anwohner findet am 23. Oktober um 18 Uhr in der ' +
    'Grundschule Nord statt.',
  'Beschlüsse: 1. Die Verschiebung der Fertigstellung auf Februar 2026 wird zur Kenntnis genommen. 2. Die ' +
    'Kämmerei erstellt die Gemeinderatsvorlage zu den Mehrkosten. 3. Samstagsarbeiten beginnen ab sofort nicht vor ' +
    '9 Uhr.',
  'Nächste Sitzung: 4. November 2025, 10:00 Uhr.',
].join('\n\n');

const TEMPLATE = [
  '# {{title|Titel der Sitzung, höchstens zehn Wörter}}',
  '',
  'Datum: {{date|Datum der Sitzung im ISO-Format JJJJ-MM-TT}}',
  '',
  'Teilnehmende: {{participants|Namen aller Anwesenden, durch Kommas getrennt}}',
  '',
  '## Kosten',
  '{{costs|Die aktuelle Kostenschätzung und der Grund der Mehrkosten in einem Satz}}',
  '',
  '## Beschlüsse',
  '{{decisions|Die Beschlüsse als kurze Liste, eine Zeile je Beschluss}}',
  '',
  'Nächste Sitzung: {{next_meeting|Datum der nächsten Sitzung im ISO-Format}}',
].join('\n');

/** About 1,500 words of English prose on a city's transport plans, built from distinct sentences. */
function longText(): string {
  const subjects = [
    'The tram network',
    'The bus company',
    'The cycling department',
    'The railway station',
    'The parking office',
    'The city council',
  ];
  const facts = [
    'reported that passenger numbers grew by nine percent compared with the previous year',
    'plans to replace its oldest vehicles with electric models before the end of the decade',
    'asked residents for comments on a draft timetable that adds late evening services',
    'said that construction on the northern route will close two streets for six months',
    'expects the new ticket machines to accept contactless payment from next spring',
    'published a survey in which most respondents asked for more frequent services at weekends',
    'noted that maintenance costs rose because spare parts became more expensive',
    'will test on-demand minibuses in three outlying districts during the summer',
  ];
  const paras: string[] = [];
  for (let p = 0; paras.join(' ').split(/\s+/).length < 1500; p++) {
    const lines = subjects.map(
      (s, i) => `${s} ${facts[(p * 3 + i) % facts.length]}, according to the report for district ${p + 1}.`,
    );
    paras.push(`Section ${p + 1}. ${lines.join(' ')}`);
  }
  return paras.join('\n\n');
}

interface Recorded {
  body: {
    messages: { role: string; content: string }[];
    max_tokens?: number;
    temperature?: number;
    response_format?: { type: string; json_schema?: { schema: object } };
  };
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** A pass-through to the model server that keeps each chat request and the usage of its answer. */
async function recorder(target: number): Promise<{ port: number; calls: Recorded[]; close: () => void }> {
  const calls: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const up = http.request(
        { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers },
        (r) => {
          const back: Buffer[] = [];
          r.on('data', (c: Buffer) => back.push(c));
          r.on('end', () => {
            const answer = Buffer.concat(back);
            if (req.url?.endsWith('/chat/completions') && r.statusCode === 200 && !res.destroyed)
              calls.push({ body: JSON.parse(body.toString()), usage: JSON.parse(answer.toString()).usage });
            res.writeHead(r.statusCode ?? 502, r.headers).end(answer);
          });
        },
      );
      up.on('error', () => res.writeHead(502).end());
      // A client that gives up (an activity retried after a lost heartbeat) cancels its upstream request, as it
      // would without the recorder; that request is not recorded.
      res.on('close', () => {
        if (!res.writableEnded) up.destroy();
      });
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as { port: number }).port, calls, close: () => server.close() };
}

async function runJob(url: string, parameters: Record<string, unknown>): Promise<{ ms: number; results: any }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/jobs/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ job_type: 'transformer', parameters: { ...parameters, use_cache: false } }),
  });
  const created = (await res.json()) as { data: { job_id: string } };
  for (;;) {
    const r = (await (await fetch(`${url}/api/jobs/${created.data.job_id}?wait=30`)).json()) as {
      data: { status: string; results: any; error: unknown };
    };
    if (r.data.status === 'completed') return { ms: performance.now() - t0, results: r.data.results };
    if (r.data.status === 'failed') throw new Error(`job failed: ${JSON.stringify(r.data.error)}`);
  }
}

async function main() {
  const cleanup = cleanupRegistry();
  if (!fs.existsSync(MODEL_PATH)) throw new Error(`no model at ${MODEL_PATH}: run node scripts/engines-llm.mjs`);
  out(
    `llm bench: ${path.basename(MODEL_PATH)}, context ${CONTEXT}, ${THREADS} thread(s) on ${os.availableParallelism()} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-llm-'));
  cleanup.add(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const temporal = await startTemporalDev({
    bin: temporalBinary(),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    headless: true,
  });
  cleanup.add(() => temporal.stop());
  const modelPort = await freePort();
  const t0 = performance.now();
  const server = await startLocalLlm({
    root: ROOT,
    port: modelPort,
    env: { ...process.env, LLM_LOCAL_MODEL_PATH: MODEL_PATH, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  cleanup.add(() => stopChild(server.child, 10_000));
  out(
    `model server: ready ${secs(performance.now() - t0)} after spawn (load included), RSS ${(procMem(server.child.pid)!.rss / 1024).toFixed(0)} MB`,
  );
  const rec = await recorder(modelPort);
  cleanup.add(async () => rec.close());
  const svc = await startService('llm', temporal.address, {
    LLM_PROVIDER: 'local',
    LLM_LOCAL_PORT: String(rec.port),
    LLM_LOCAL_MODEL_PATH: MODEL_PATH,
  });
  cleanup.add(() => stopService(svc));

  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: MODEL_PATH });
  const context = await model.createContext({ contextSize: CONTEXT, threads: THREADS });
  const chat = new LlamaChat({ contextSequence: context.getSequence() });
  cleanup.add(() => llama.dispose());

  /** One recorded request straight to node-llama-cpp; the sequence is cleared first (no prefix reuse across calls). */
  const raw = async (r: Recorded) => {
    await chat.sequence.clearHistory();
    const history: ChatHistoryItem[] = r.body.messages.map((m) =>
      m.role === 'system'
        ? { type: 'system', text: m.content }
        : m.role === 'user'
          ? { type: 'user', text: m.content }
          : { type: 'model', response: [m.content] },
    );
    history.push({ type: 'model', response: [] });
    const rf = r.body.response_format;
    const grammar =
      rf?.type === 'json_schema'
        ? await llama.createGrammarForJsonSchema(rf.json_schema!.schema as never)
        : rf?.type === 'json_object'
          ? await llama.getGrammarFor('json')
          : undefined;
    const meter = chat.sequence.tokenMeter.getState();
    const t = performance.now();
    await chat.generateResponse(history, {
      maxTokens: r.body.max_tokens,
      temperature: r.body.temperature ?? 0,
      grammar,
    });
    return { ms: performance.now() - t, out: chat.sequence.tokenMeter.diff(meter).usedOutputTokens };
  };

  const cases = [
    {
      name: 'template fill, one page (German)',
      params: {
        operation: 'template',
        text: PAGE,
        template_content: TEMPLATE,
        source_language: 'de',
        target_language: 'de',
      },
    },
    { name: 'summary, 1,500 words (English)', params: { operation: 'summarize', text: longText(), max_length: 1000 } },
  ];
  for (const c of cases) {
    let bestSvc = Infinity;
    let bestRaw = Infinity;
    let svcTokens = 0;
    let rawTokens = 0;
    let rawGenMs = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      rec.calls.length = 0;
      // Each round's text differs from its first line on: the model server keeps the last prompt's tokens and
      // would skip evaluating a repeated one (the raw runs start from an empty sequence every time).
      const s = await runJob(svc.url, { ...c.params, text: `(Round ${round}.)\n${String(c.params.text)}` });
      const calls = [...rec.calls];
      svcTokens = calls.reduce((n, x) => n + (x.usage?.completion_tokens ?? 0), 0);
      const words = String(c.params.text).split(/\s+/).length;
      const answer = String(s.results.summary ?? JSON.stringify(s.results.template_fields))
        .slice(0, 160)
        .replace(/\s+/g, ' ');
      out(
        `${c.name}: ${words} words, ${calls.length} model call(s), prompt tokens ${calls.map((x) => x.usage?.prompt_tokens).join('+')}; service ${secs(s.ms)}; answer: ${answer}…`,
      );
      let r = 0;
      rawTokens = 0;
      for (const call of calls) {
        const one = await raw(call);
        r += one.ms;
        rawTokens += one.out;
      }
      rawGenMs = r;
      out(
        `${c.name}: raw node-llama-cpp, the same ${calls.length} request(s): ${secs(r)} (${rawTokens} tokens generated; service ${svcTokens})`,
      );
      out(`${c.name}: round ${round} service/raw ${(s.ms / r).toFixed(2)}×`);
      bestSvc = Math.min(bestSvc, s.ms);
      bestRaw = Math.min(bestRaw, r);
    }
    out(
      `${c.name}: overhead service/raw ${(bestSvc / bestRaw).toFixed(2)}×  (best of ${ROUNDS}: ${secs(bestSvc)} vs ${secs(bestRaw)}); raw ${(rawTokens / (rawGenMs / 1000)).toFixed(1)} tokens/s generated (prompt evaluation included)`,
    );
  }
  const m = procMem(server.child.pid);
  out(
    `model server: peak RSS (VmHWM) ${((m?.hwm ?? NaN) / 1024).toFixed(0)} MB, RSS now ${((m?.rss ?? NaN) / 1024).toFixed(0)} MB; load average now ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  await cleanup.run();
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
