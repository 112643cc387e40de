/**
 * Our document readers (domain/documents: readDocument + renderDocument as Markdown) beside docling-slim (its
 * declarative office, OpenDocument, e-mail, EPUB and HTML backends, no models) and LibreOffice → PDF → pdftotext, in
 * one run on the same real documents (bench/real-documents.ts), scored against a truth read from each file's own
 * structure by bench/documents_truth.py (Python's standard library: nothing shared with our readers or docling's).
 *
 * Time is the conversion call alone, per document: ours in this process (bytes already in memory), docling in one
 * worker process whose converter is built once (bench/documents_docling.py, an in-memory stream per call), LibreOffice
 * warm (`LibreOfficeEngine`, one soffice kept running) plus pdftotext. Ours and docling first convert every document
 * once (an untimed warm-up pass); then each tool converts each document once untimed,
 * then BENCH_DOCS_RUNS times (default 5); the median counts. One conversion at a time. Then a warm LibreOffice
 * conversion of a 10-page DOCX (written by LibreOffice from a generated flat ODT) to PDF.
 *
 * docling-slim (MIT) runs only in its venv in the cache (~/.cache/docproc/docling-venv), never in the service; when it
 * cannot be installed the run says so and shows ours and LibreOffice alone. Scores: bench/documents-scoring.ts.
 *
 * Run: `npx tsx bench/documents.bench.ts` (BENCH_DOCS_ONLY=text keeps the documents whose name holds it;
 * BENCH_DOCS_DUMP=dir keeps every tool's output there).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { libreOfficePath } from '../core/config/config';
import { DEFAULT_READ_LIMITS } from '../domain/documents/model';
import { readDocument } from '../domain/documents/read';
import { renderDocument } from '../domain/documents/render';
import { LibreOfficeEngine } from '../providers/office/libreoffice';
import {
  addScores,
  emptyScores,
  missed,
  score,
  SCORES,
  type ScoreName,
  type Scores,
  type Truth,
} from './documents-scoring';
import { DoclingWorker, doclingPython, DOCLING_VERSION } from './documents-docling';
import { provisionDocuments, type BenchFormat } from './real-documents';
import { envInt, out } from './support';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Math.max(1, envInt('BENCH_DOCS_RUNS', 5));
/** What LibreOffice opens of the bench's formats (not EPUB, not e-mail). */
const LO_FORMATS = new Set<BenchFormat>(['docx', 'pptx', 'xlsx', 'odt', 'ods', 'odp', 'html']);
const TOOLS = ['ours', 'docling', 'lo'] as const;
type Tool = (typeof TOOLS)[number];

interface Row {
  name: string;
  format: BenchFormat;
  scores: Partial<Record<Tool, Scores>>;
  ms: Partial<Record<Tool, number>>;
  errors: Partial<Record<Tool, string>>;
  outputs: Partial<Record<Tool, string>>;
  truth: Truth;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const pct = (s: { found: number; total: number } | undefined) =>
  !s || s.total === 0 ? '–' : `${Math.floor((100 * s.found) / s.total)}`;
const msText = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(1));
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  await fn(); // untimed first conversion
  let value: T | undefined;
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    value = await fn();
    ms.push(performance.now() - t0);
  }
  return { value: value!, ms: median(ms) };
}

async function ours(bytes: Uint8Array): Promise<string> {
  const read = await readDocument(bytes, DEFAULT_READ_LIMITS);
  if (read.kind !== 'model') throw new Error(`routed to the ${read.format} pipeline`);
  return renderDocument(read.model, { markdown: true }).markdown ?? '';
}

function truthOf(files: { format: BenchFormat; file: string }[]): Record<string, Truth> {
  const r = spawnSync(
    'python3',
    [path.join(HERE, 'documents_truth.py'), ...files.map((f) => `${f.format}:${f.file}`)],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    },
  );
  if (r.status !== 0) throw new Error(`the truth extractor failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, Truth>;
}

/** The flat ODT of `pages` chapters the LibreOffice test writes (test/integration/office-engine.test.ts). */
function tenPageFodt(pages: number): string {
  const ns = ['office', 'text', 'style', 'fo']
    .map((p) => `xmlns:${p}="urn:oasis:names:tc:opendocument:xmlns:${p === 'fo' ? 'xsl-fo-compatible' : p}:1.0"`)
    .join(' ');
  const body = Array.from({ length: pages }, (_, p) => {
    const paras = Array.from(
      { length: 8 },
      (_, i) =>
        `<text:p>Paragraph ${i + 1} of chapter ${p + 1}. ${'Lorem ipsum dolor sit amet, consectetur. '.repeat(6)}</text:p>`,
    );
    return `<text:h text:outline-level="1"${p ? ' text:style-name="PB"' : ''}>Chapter ${p + 1}</text:h>${paras.join('')}`;
  }).join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?><office:document ${ns} office:version="1.3" ` +
    'office:mimetype="application/vnd.oasis.opendocument.text"><office:automatic-styles>' +
    '<style:style style:name="PB" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/>' +
    `</style:style></office:automatic-styles><office:body><office:text>${body}</office:text></office:body></office:document>`
  );
}

/** `soffice --headless --convert-to pdf` in a profile of its own, then pdftotext; null when it fails. */
function oneShotPdfText(soffice: string, file: string, tmp: string): string | null {
  const dir = fs.mkdtempSync(path.join(tmp, 'oneshot-'));
  const profile = `-env:UserInstallation=file://${dir}/profile`;
  const r = spawnSync(soffice, ['--headless', profile, '--convert-to', 'pdf', '--outdir', dir, file], {
    timeout: 120_000,
    stdio: 'ignore',
  });
  const pdf = path.join(dir, `${path.parse(file).name}.pdf`);
  if (r.status !== 0 || !fs.existsSync(pdf)) return null;
  return execFileSync('pdftotext', ['-enc', 'UTF-8', pdf, '-'], { maxBuffer: 1 << 28 }).toString();
}

function printTables(rows: Row[], hasDocling: boolean) {
  const tools: Tool[] = hasDocling ? ['ours', 'docling', 'lo'] : ['ours', 'lo'];
  const cell = (r: Row, k: ScoreName) =>
    tools
      .filter((t) => t !== 'lo' || ['text', 'words', 'values'].includes(k))
      .map((t) => (r.errors[t] && r.outputs[t] === undefined ? '✗' : pct(r.scores[t]?.[k])))
      .join(' / ');
  out(
    `per document: each score ${tools.join(' / ')} (%, "–" nothing of that kind, "✗" the tool failed); LO scores text,`,
  );
  out('words and sheet values only (plain text). Time: median ms of the conversion call.');
  out('');
  out(`| document | ${SCORES.join(' | ')} | ${tools.map((t) => `${t} ms`).join(' | ')} |`);
  out(`|---|${SCORES.map(() => '---').join('|')}|${tools.map(() => '---:').join('|')}|`);
  for (const r of rows)
    out(
      `| ${r.name} | ${SCORES.map((k) => cell(r, k)).join(' | ')} | ${tools.map((t) => msText(r.ms[t])).join(' | ')} |`,
    );
  const groups = [...new Set(rows.map((r) => r.format)), 'all'] as const;
  out('');
  out('per format: found / total summed over the documents (%), time: median over the documents of their medians (ms)');
  out('');
  out(`| format | docs | ${SCORES.join(' | ')} | ${tools.map((t) => `${t} ms`).join(' | ')} |`);
  out(`|---|---:|${SCORES.map(() => '---').join('|')}|${tools.map(() => '---:').join('|')}|`);
  for (const g of groups) {
    const rs = rows.filter((r) => g === 'all' || r.format === g);
    const sum = Object.fromEntries(tools.map((t) => [t, emptyScores()])) as Record<Tool, Scores>;
    for (const r of rs) for (const t of tools) if (r.scores[t]) addScores(sum[t], r.scores[t]!);
    const agg = { name: g, format: 'html', scores: sum, ms: {}, errors: {}, outputs: {}, truth: rs[0]!.truth } as Row;
    const ms = tools.map((t) => msText(median(rs.map((r) => r.ms[t]).filter((x): x is number => x !== undefined))));
    out(`| ${g} | ${rs.length} | ${SCORES.map((k) => cell(agg, k)).join(' | ')} | ${ms.join(' | ')} |`);
  }
}

function printComparison(rows: Row[]) {
  const both = rows.filter((r) => r.ms.ours !== undefined && r.ms.docling !== undefined);
  const ratios = both.map((r) => r.ms.ours! / r.ms.docling!);
  const total = (t: Tool) => both.reduce((a, r) => a + r.ms[t]!, 0);
  out('');
  out(
    `time ours / docling: median of the per-document ratios ${median(ratios).toFixed(3)}× (worst ${Math.max(...ratios).toFixed(3)}×), ` +
      `sums ${total('ours').toFixed(0)} / ${total('docling').toFixed(0)} ms = ${(total('ours') / total('docling')).toFixed(3)}× over ${both.length} documents`,
  );
  // All documents (a document docling failed on counts as nothing found), then only those docling converted.
  for (const [label, rs] of [
    ['all documents', rows],
    [`the ${both.length} documents docling converted`, both],
  ] as const) {
    const sum = { ours: emptyScores(), docling: emptyScores() };
    for (const r of rs) {
      if (r.scores.ours) addScores(sum.ours, r.scores.ours);
      if (r.scores.docling) addScores(sum.docling, r.scores.docling);
    }
    const delta = (k: ScoreName) => {
      const [o, d] = [sum.ours[k], sum.docling[k]];
      return o.total && d.total ? `${k} ${(100 * (o.found / o.total - d.found / d.total)).toFixed(1)}` : `${k} –`;
    };
    const both2 = (k: ScoreName) => `${k} ${pct(sum.ours[k])}/${pct(sum.docling[k])}`;
    out(`scores ours/docling (%), ${label}: ${SCORES.map(both2).join(', ')}`);
    out(`score deltas, ours − docling (percentage points), ${label}: ${SCORES.map(delta).join(', ')}`);
  }
  out('');
  out('where ours scores below docling (document, score: ours vs docling; what ours missed):');
  let any = false;
  for (const r of rows)
    for (const k of SCORES) {
      const [o, d] = [r.scores.ours?.[k], r.scores.docling?.[k]];
      if (!o || !d || !o.total || !d.total || o.found / o.total >= d.found / d.total) continue;
      any = true;
      const gone = missed(r.truth, r.outputs.ours ?? '', k).map((m) => JSON.stringify(m.slice(0, 60)));
      out(`- ${r.name}, ${k}: ${o.found}/${o.total} vs ${d.found}/${d.total}; missed ${gone.join(', ')}`);
    }
  if (!any) out('- nowhere');
  out('');
  out("where ours takes more than half of docling's time (ours / docling ms):");
  const slow = both.filter((r) => r.ms.ours! > r.ms.docling! / 2);
  for (const r of slow) out(`- ${r.name}: ${msText(r.ms.ours)} / ${msText(r.ms.docling)} = ${ratioText(r)}`);
  if (!slow.length) out('- nowhere');
}

const ratioText = (r: Row) => `${(r.ms.ours! / r.ms.docling!).toFixed(2)}×`;

/** Every score of ours below 100 %, with what it missed: for the readers' owner. */
function printOursMisses(rows: Row[]) {
  out('');
  out('what ours missed (every score below 100 %; up to 3 examples):');
  for (const r of rows)
    for (const k of SCORES) {
      const o = r.scores.ours?.[k];
      if (!o || !o.total || o.found === o.total || r.errors.ours || k === 'words') continue;
      const gone = missed(r.truth, r.outputs.ours ?? '', k).map((m) => JSON.stringify(m.slice(0, 70)));
      out(`- ${r.name}, ${k} ${o.found}/${o.total}: ${gone.join(', ')}`);
    }
}

async function main() {
  const only = process.env.BENCH_DOCS_ONLY;
  const dump = process.env.BENCH_DOCS_DUMP;
  if (dump) fs.mkdirSync(dump, { recursive: true });
  const { files, changed, missing } = provisionDocuments();
  const docs = files.filter((f) => !only || f.doc.name.includes(only));
  const py = doclingPython();
  const soffice = libreOfficePath({ LIBREOFFICE_PATH: process.env.LIBREOFFICE_PATH });
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: HERE, encoding: 'utf8' }).stdout.trim();
  out(`documents bench: ${docs.length} real documents, ${RUNS} timed runs each after one untimed; commit ${commit}`);
  out(`docling-slim ${py ? DOCLING_VERSION : 'NOT available (could not be installed): ours and LibreOffice only'}`);
  out(`LibreOffice: ${soffice}; load average at the start: ${load()}`);
  if (changed.length) out(`NOTE: sha256 differs from the pinned one (a newer package): ${changed.join(', ')}`);
  if (missing.length) out(`NOTE: left out, could not be fetched: ${missing.join('; ')}`);
  out('');
  const truth = truthOf(docs.map((d) => ({ format: d.doc.format, file: d.file })));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'documents-bench-'));
  // A conversion that kills soffice leaves the engine answering every later call with an error: a fresh engine then.
  const lo = { engine: new LibreOfficeEngine({ sofficePath: soffice, scratchDir: tmp }), restarts: 0 };
  const docling = py ? await DoclingWorker.start(py, path.join(HERE, 'documents_docling.py')) : null;
  try {
    // Untimed warm-up over every document: the service's worker and docling's converter are long-lived, their code
    // compiled and imported after a first pass; the first document of the table would otherwise pay it alone.
    for (const { file } of docs) {
      await ours(new Uint8Array(fs.readFileSync(file))).catch(() => undefined);
      await docling?.convert(file, path.join(tmp, 'docling.md'), 0).catch(() => undefined);
    }
    const rows: Row[] = [];
    for (const { doc, file } of docs) {
      const t = truth[file]!;
      if (t.error) {
        out(`(${doc.name}: the truth extractor could not read it: ${t.error}; left out)`);
        continue;
      }
      const row: Row = { name: doc.name, format: doc.format, scores: {}, ms: {}, errors: {}, outputs: {}, truth: t };
      const bytes = new Uint8Array(fs.readFileSync(file));
      const runs: Partial<Record<Tool, () => Promise<{ value: string; ms: number }>>> = {
        ours: () => timed(() => ours(bytes)),
        lo: LO_FORMATS.has(doc.format)
          ? () =>
              timed(async () => {
                const pdf = await lo.engine.convert(file, 'pdf', tmp);
                return execFileSync('pdftotext', ['-enc', 'UTF-8', pdf, '-'], { maxBuffer: 1 << 28 }).toString();
              })
          : undefined,
        docling: docling ? () => docling.convert(file, path.join(tmp, 'docling.md'), RUNS) : undefined,
      };
      for (const tool of TOOLS) {
        const run = runs[tool];
        if (!run) continue;
        try {
          const { value, ms } = await run();
          row.outputs[tool] = value;
          row.ms[tool] = ms;
          row.scores[tool] = score(t, value, tool === 'lo');
          if (dump) fs.writeFileSync(path.join(dump, `${doc.name}.${tool}.${tool === 'lo' ? 'txt' : 'md'}`), value);
        } catch (e) {
          row.errors[tool] = (e as Error).message.slice(0, 200);
          row.scores[tool] = score(t, '', tool === 'lo');
          if (tool === 'lo') {
            await lo.engine.close();
            lo.engine = new LibreOfficeEngine({ sofficePath: soffice, scratchDir: tmp });
            lo.restarts++;
            // LibreOffice itself may still convert it: a one-shot `soffice --convert-to`, scored but not timed.
            const text = oneShotPdfText(soffice, file, tmp);
            if (text !== null) {
              row.outputs.lo = text;
              row.scores.lo = score(t, text, true);
              row.errors.lo += ' (scored from a one-shot soffice --convert-to pdf, untimed)';
            }
          }
        }
      }
      rows.push(row);
    }
    printTables(rows, docling !== null);
    for (const r of rows)
      for (const t of TOOLS) if (r.errors[t]) out(`- ${t} failed on ${r.name}: ${r.errors[t]!.replace(/\s+/g, ' ')}`);
    if (docling) printComparison(rows);
    printOursMisses(rows);

    const fodt = path.join(tmp, 'ten.fodt');
    fs.writeFileSync(fodt, tenPageFodt(10));
    out(`LibreOffice engine restarted ${lo.restarts} times after a failed conversion`);
    const docx = await lo.engine.convert(fodt, 'docx', tmp);
    const pages = async () => {
      const pdf = await lo.engine.convert(docx, 'pdf', tmp);
      return Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [pdf]).toString())?.[1] ?? 0);
    };
    const n = await pages();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await lo.engine.convert(docx, 'pdf', tmp);
      times.push(performance.now() - t0);
    }
    out('');
    out(
      `warm LibreOffice, ${n}-page DOCX → PDF: median ${median(times).toFixed(0)} ms of 5 (${times.map((x) => x.toFixed(0)).join(', ')}; goal < 1000 ms)`,
    );
    out(`load average at the end: ${load()}`);
  } finally {
    await docling?.close();
    await lo.engine.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
