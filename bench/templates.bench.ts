/**
 * Template fills scored per field against known answers (issue #23 point 8, contract §5): does the model fill what
 * the text says, leave empty what it does not, and answer list-like fields as lists? Prints per-case lines and
 * totals for each pass side by side; asserts nothing.
 *
 *   npm run bench -- templates        (provisions the engines and the model first)   or   npx tsx bench/templates.bench.ts
 *
 * Cases: bench/data/templates/*.json (bench/template-scoring.ts says how they are scored), each a short real text
 * with a template, through `POST /api/transformer/template` (`Prefer: respond-async`, then `GET /api/jobs/{id}?wait=30`
 * until the job ends; `use_cache: false`) of a real api/worker pair on a Temporal dev server, in two passes:
 * - wire: the OpenAI-compatible test double of the tests (test/support/servers/llm-server.ts), as the local provider
 *   (`LLM_PROVIDER=local`, so the JSON schema goes over the wire), answering what a perfect model would: each
 *   field's known answer shaped as the request's schema types it. It is a double: its scores measure the service's
 *   plumbing (fields asked, schema types, answers kept as they came), not a model. It also checks each request's
 *   prompt for the empty-when-unsupported instruction.
 * - local: the local model server (llm-server/main.ts with the provisioned Qwen2.5-Coder-1.5B GGUF, as `npm start`
 *   runs it), one case after the other; time per case from the POST to the finished job.
 * Knobs: BENCH_TPL_PASSES (wire,local), BENCH_TPL_CASES (comma-separated substrings of case names; all when unset),
 * BENCH_TPL_JSON (a file to write every answer and score to, for comparing runs), BENCH_TPL_RESCORE (such a file:
 * score its answers again with the current cases and print, no service started).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config/config';
import { freePort, startLocalLlm, startTemporalDev, stopChild } from '../scripts/services.mjs';
import { startLlmServer, type LlmRequest } from '../test/support/servers/llm-server';
import { ROOT } from '../test/support/servers/processes';
import { startService, stopService } from './service';
import { cleanupRegistry, out, secs, temporalBinary } from './support';
import {
  loadCases,
  norm,
  oracleAnswer,
  scoreField,
  totals,
  type FieldScore,
  type TemplateCase,
} from './template-scoring';

const DATA = path.join(path.dirname(fileURLToPath(import.meta.url)), 'data', 'templates');
const PASSES = (process.env.BENCH_TPL_PASSES || 'wire,local,grounded').split(',').map((s) => s.trim());
const ONLY = (process.env.BENCH_TPL_CASES || '').split(',').filter(Boolean);
const MODEL_PATH = loadConfig({
  LLM_LOCAL_MODEL_PATH: process.env.LLM_LOCAL_MODEL_PATH,
  DOCPROC_CACHE_DIR: process.env.DOCPROC_CACHE_DIR,
}).localLlm.modelPath;
/** The prompt's instruction for fields the text does not support, as the wire pass looks for it. */
const EMPTY_RULE = /empty string|leave (that|the) field empty|\[\] for a list|an empty (list|array)/i;

/** A grounded field's source as the service answers it (contract §14). */
interface SourceSpan {
  text: string;
  start: number;
  end: number;
  items?: SourceSpan[];
}

interface CaseRun {
  name: string;
  ms: number;
  error?: string;
  fields: Record<string, unknown>;
  scores: FieldScore[];
  /** The grounded pass: each field's source and the fields the service emptied. */
  sources?: Record<string, SourceSpan | null>;
  unsupported?: string[];
}

interface Filled {
  ms: number;
  fields: Record<string, unknown>;
  sources?: Record<string, SourceSpan | null>;
  unsupported?: string[];
}

async function fill(url: string, c: TemplateCase, grounding = false): Promise<Filled> {
  const t0 = performance.now();
  const body = {
    text: c.text,
    ...(c.template ? { template: c.template } : { template_content: c.template_content }),
    source_language: c.source_language,
    target_language: c.target_language,
    ...(c.context ? { context: c.context } : {}),
    ...(grounding ? { grounding: true } : {}),
    use_cache: false,
  };
  const res = await fetch(`${url}/api/transformer/template`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify(body),
  });
  const created = (await res.json()) as { data?: { job_id?: string }; error?: unknown };
  const id = created.data?.job_id;
  if (res.status !== 202 || !id)
    throw new Error(`POST answered ${res.status}: ${JSON.stringify(created).slice(0, 300)}`);
  for (;;) {
    const r = (await (await fetch(`${url}/api/jobs/${id}?wait=30`)).json()) as {
      data: {
        status: string;
        results: {
          template_fields?: Record<string, unknown>;
          template_sources?: Record<string, SourceSpan | null>;
          unsupported_fields?: string[];
        };
        error: unknown;
      };
    };
    if (r.data.status === 'completed') {
      const res = r.data.results;
      return {
        ms: performance.now() - t0,
        fields: res.template_fields ?? {},
        ...(grounding ? { sources: res.template_sources ?? {}, unsupported: res.unsupported_fields ?? [] } : {}),
      };
    }
    if (r.data.status === 'failed') throw new Error(`job failed: ${JSON.stringify(r.data.error).slice(0, 300)}`);
  }
}

const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > 90 ? `${s.slice(0, 87)}…` : s;
};

const scoreCase = (c: TemplateCase, fields: Record<string, unknown>, failed: boolean): FieldScore[] =>
  Object.entries(c.expected).map(([f, e]) => {
    const s = scoreField(f, e, fields[f]);
    return failed ? { ...s, hit: false } : s;
  });

async function runPass(label: string, url: string, cases: TemplateCase[], grounding = false): Promise<CaseRun[]> {
  const runs: CaseRun[] = [];
  for (const c of cases) {
    let run: CaseRun;
    try {
      const r = await fill(url, c, grounding);
      run = {
        name: c.name,
        ms: r.ms,
        fields: r.fields,
        scores: scoreCase(c, r.fields, false),
        ...(r.sources ? { sources: r.sources, unsupported: r.unsupported } : {}),
      };
    } catch (e) {
      run = { name: c.name, ms: NaN, error: String(e), fields: {}, scores: scoreCase(c, {}, true) };
    }
    runs.push(run);
    printRun(label, c, run);
  }
  return runs;
}

function printRun(label: string, c: TemplateCase, run: CaseRun) {
  const scored = run.scores.filter((s) => s.category !== 'unscored');
  const hits = String(scored.filter((s) => s.hit).length).padStart(2);
  const error = run.error ? `  ERROR ${run.error}` : '';
  out(
    `${label.padEnd(5)} ${c.name.padEnd(34)} ${hits}/${String(scored.length).padEnd(2)} fields  ${secs(run.ms).padStart(8)}${error}`,
  );
  for (const s of run.scores) {
    if (s.hit && s.category !== 'unscored') continue;
    const tag = s.category === 'unscored' ? '(not scored)' : `MISS ${s.category}${s.why ? `: ${s.why}` : ''}`;
    out(`        ${s.field.padEnd(16)} ${tag.padEnd(44)} got ${show(run.fields[s.field])}`);
  }
}

/** BENCH_TPL_RESCORE: the answers of an earlier run (BENCH_TPL_JSON) scored again with the current cases. */
function rescore(file: string, cases: TemplateCase[]) {
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, CaseRun[]>;
  const passes: Record<string, CaseRun[]> = {};
  for (const [label, runs] of Object.entries(saved)) {
    passes[label] = [];
    for (const c of cases) {
      const old = runs.find((r) => r.name === c.name);
      if (!old) continue;
      const run = { ...old, ms: old.ms ?? NaN, scores: scoreCase(c, old.fields, Boolean(old.error)) };
      passes[label].push(run);
      printRun(label, c, run);
    }
  }
  summary(passes);
}

const pct = (t?: { hits: number; n: number }) =>
  t && t.n
    ? `${String(t.hits).padStart(3)}/${String(t.n).padEnd(3)} ${((100 * t.hits) / t.n).toFixed(0).padStart(3)} %`
    : 'n/a';

function summary(passes: Record<string, CaseRun[]>) {
  const names = Object.keys(passes);
  const t = Object.fromEntries(names.map((p) => [p, totals(passes[p]!.flatMap((r) => r.scores))]));
  const rows: [string, string][] = [
    ['supported fields filled right (exact/contains/list)', 'supported'],
    ['unsupported fields left empty', 'unsupported'],
    ['shape (tags a keyword list, nothing padded)', 'shape'],
    ['all scored fields', 'all'],
    ['list-like fields answered as a JSON array', 'array'],
    ['of the unsupported misses: a stand-in (n/a, unknown…)', 'placeholder'],
  ];
  out('');
  out(
    `${'TOTALS'.padEnd(56)}${names.map((n) => (n === 'wire' ? 'wire (double: plumbing)' : `${n} model`).padEnd(26)).join('')}`,
  );
  for (const [label, key] of rows) out(`${label.padEnd(56)}${names.map((n) => pct(t[n]![key]).padEnd(26)).join('')}`);
  const times = names.map((n) => {
    const ms = passes[n]!.map((r) => r.ms)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    const sum = ms.reduce((a, b) => a + b, 0);
    return `${secs(sum)} (p50 ${secs(ms[Math.floor(ms.length / 2)] ?? NaN)})`.padEnd(26);
  });
  out(`${'time: all cases (p50 per case)'.padEnd(56)}${times.join('')}`);
  const failed = names.map((n) => String(passes[n]!.filter((r) => r.error).length).padEnd(26));
  out(`${'cases that failed'.padEnd(56)}${failed.join('')}`);
  for (const n of names) if (passes[n]!.some((r) => r.sources)) spanSummary(n, passes[n]!);
}

/**
 * The grounded pass's sources checked against the cases' texts: each span's text is the case text between its
 * offsets; its value stands in it literally (normalised as the scores are), or the service matched it as a date or
 * by its words (shown apart); and how many fields the service emptied.
 */
function spanSummary(label: string, runs: CaseRun[]) {
  const texts = new Map(loadCases(DATA).map((c) => [c.name, c.text]));
  let spans = 0;
  let offsetsRight = 0;
  let literal = 0;
  let emptied = 0;
  const other: string[] = [];
  for (const r of runs) {
    const text = texts.get(r.name) ?? '';
    emptied += r.unsupported?.length ?? 0;
    for (const [field, src] of Object.entries(r.sources ?? {})) {
      if (!src) continue;
      const value = r.fields[field];
      const pieces: [unknown, SourceSpan][] = Array.isArray(value)
        ? value.map((v, i) => [v, src.items?.[i] ?? src] as [unknown, SourceSpan])
        : [[value, src]];
      for (const [v, span] of pieces) {
        spans++;
        if (text.slice(span.start, span.end) === span.text) offsetsRight++;
        if (norm(span.text).includes(norm(String(v)))) literal++;
        else other.push(`${r.name}.${field}: ${JSON.stringify(v)} in ${JSON.stringify(span.text.slice(0, 60))}`);
      }
    }
  }
  out('');
  out(
    `${label}: ${spans} source spans; offsets right ${offsetsRight}/${spans}; value literally inside ${literal}/${spans}; fields emptied by the check ${emptied}`,
  );
  for (const o of other) out(`        matched as a date or by its words: ${o}`);
}

async function main() {
  const cleanup = cleanupRegistry();
  const cases = loadCases(DATA).filter((c) => ONLY.length === 0 || ONLY.some((o) => c.name.includes(o)));
  const fields = cases.reduce((n, c) => n + Object.keys(c.expected).length, 0);
  const empties = cases.reduce((n, c) => n + Object.values(c.expected).filter((e) => e === 'EMPTY').length, 0);
  out(
    `templates bench: ${cases.length} cases, ${fields} fields (${empties} the text does not support); passes ${PASSES.join(', ')}; ${os.availableParallelism()} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  if (process.env.BENCH_TPL_RESCORE) return rescore(process.env.BENCH_TPL_RESCORE, cases);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-templates-'));
  cleanup.add(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const temporal = await startTemporalDev({
    bin: temporalBinary(),
    dbFile: path.join(dir, 'temporal.db'),
    port: await freePort(),
    uiPort: 0,
    headless: true,
  });
  cleanup.add(() => temporal.stop());
  const passes: Record<string, CaseRun[]> = {};
  const common = { LLM_PROVIDER: 'local', LLM_LOCAL_MODEL_PATH: MODEL_PATH, SYNC_WAIT_MS: '600000' };

  if (PASSES.includes('wire')) {
    const llm = await startLlmServer();
    const byText = (req: LlmRequest) => {
      const user = String(req.json?.messages?.find((m: { role: string }) => m.role === 'user')?.content ?? '');
      return cases.find((c) => user.includes(c.text));
    };
    let withRule = 0;
    const listTyped = new Set<string>();
    llm.respond((req) => {
      const c = byText(req);
      const schema = req.json?.response_format?.json_schema?.schema as Record<string, unknown> | undefined;
      if (!c || !schema) return { status: 400, body: { error: { message: 'bench: unknown case or no schema' } } };
      const system = String(req.json.messages.find((m: { role: string }) => m.role === 'system')?.content ?? '');
      if (EMPTY_RULE.test(system)) withRule++;
      const props = schema.properties as Record<string, { type?: string }>;
      for (const [f, p] of Object.entries(props)) if (p.type === 'array') listTyped.add(`${c.name}.${f}`);
      return { content: JSON.stringify(oracleAnswer(c, Object.keys(props), schema)) };
    });
    cleanup.add(() => llm.close());
    const svc = await startService('tpl-wire', temporal.address, { ...common, LLM_LOCAL_PORT: String(llm.port) });
    out('wire: the test double answers each field with its known answer, typed as the schema asks (plumbing only)');
    passes.wire = await runPass('wire', svc.url, cases);
    const calls = llm.chatRequests().length;
    out(
      `wire: ${calls} model call(s); ${withRule} with the empty-when-unsupported rule in the system prompt; ${listTyped.size} field(s) typed as arrays in the schema`,
    );
    await stopService(svc);
  }

  if (PASSES.includes('local') || PASSES.includes('grounded')) {
    if (!fs.existsSync(MODEL_PATH)) throw new Error(`no model at ${MODEL_PATH}: run node scripts/engines-llm.mjs`);
    const port = await freePort();
    const t0 = performance.now();
    const server = await startLocalLlm({
      root: ROOT,
      port,
      env: { ...process.env, LLM_LOCAL_MODEL_PATH: MODEL_PATH, LOG_LEVEL: 'warn' },
      stdio: 'ignore',
      timeoutMs: 300_000,
    });
    cleanup.add(() => stopChild(server.child, 10_000));
    out(`local: model server ${path.basename(MODEL_PATH)} ready ${secs(performance.now() - t0)} after spawn`);
    const svc = await startService('tpl-local', temporal.address, { ...common, LLM_LOCAL_PORT: String(port) });
    if (PASSES.includes('local')) passes.local = await runPass('local', svc.url, cases);
    // The same model with grounding=true: the service checks each value against the text (contract §14).
    if (PASSES.includes('grounded')) passes.grounded = await runPass('grnd', svc.url, cases, true);
    await stopService(svc);
  }

  summary(passes);
  if (process.env.BENCH_TPL_JSON) {
    fs.writeFileSync(process.env.BENCH_TPL_JSON, JSON.stringify(passes, null, 2));
    out(`answers written to ${process.env.BENCH_TPL_JSON}`);
  }
  await cleanup.run();
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
