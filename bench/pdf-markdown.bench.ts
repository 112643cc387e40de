/**
 * PDF → Markdown, scored against ground truth, beside `pdftotext` and `pymupdf4llm` in one run.
 *
 * Inputs (fetched into the cache, the same every run): real, freely licensed PDFs from Debian doc packages
 * (`apt-get download`, unpacked with `dpkg-deb -x`: GLPK (GPL), GnuTLS (GFDL), libidn2 (GFDL), Asymptote (LGPL/GPL),
 * R manuals (GPL)) and two already on Debian systems (libtasn1, shared-mime-info), plus a Chromium-printed report of
 * known structure (test/support/documents/html-pdf.ts). `pymupdf4llm` (AGPL) runs only in the bench's own venv in the cache,
 * never in the service.
 *
 * Scores:
 * - headings: precision and recall of the Markdown's `#` lines against the PDF's own outline (bookmarks). Our rules
 *   read the outline to confirm headings, so here they run WITHOUT it (the outline is removed from the layouts): the
 *   outline is only the ground truth.
 * - sentences: the share of reference sentences found whole (in order inside the sentence, words contiguous) in
 *   the output, after markup and whitespace are normalised. Reference: sentences of 8–40 words from `pdftotext -raw`
 *   (content-stream order) that have no hyphen at a line end, the pages' running headers and footers taken out of
 *   it, a glyph on a line of its own (a raised `A`, an index) read both apart and joined to its neighbours; for the
 *   generated report, its own sentences.
 * - tables: for the generated report (its HTML is the truth), the share of its table rows found as GFM rows; for
 *   Texinfo manuals with an HTML twin (gnutls, R-lang, R-FAQ), table detection and cell accuracy on the pages that
 *   hold the twin's tables (`table-truth.ts`).
 * - reading order: the share of pdftotext -raw's 8-word runs found in order (`reading-order.ts`), for the manuals
 *   and for eight two-column journal and conference papers (`provisionJournalPapers`, tune and score sets apart).
 * - time: Markdown (poppler layouts, drawings from the content stream where needed, + rules) against plain text through
 *   pdf.js's thread, and against pdftotext.
 *
 * Run: `npx tsx bench/pdf-markdown.bench.ts` (BENCH_PDFMD_MAX_PAGES caps pages per document, default 60;
 * BENCH_PDFMD_ONLY=name reads only the documents whose file name holds it; BENCH_PDFMD_PYMUPDF=0 leaves pymupdf4llm
 * out, for quick runs).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownPageLayouts } from '../providers/pdf/markdown-layouts';
import { documentMarkdown } from '../domain/pdf/markdown/document';
import { needsDrawings } from '../domain/pdf/markdown/needs-drawings';
import type { PageLayout } from '../domain/pdf/markdown/types';
import { describeInThread, pageTextsInThread } from '../providers/pdf/pdfjs-thread';
import { pdfPageTexts } from '../providers/pdf/poppler';
import { htmlToPdf, structuredDoc } from '../test/support/documents/html-pdf';
import { bestOf as best, envInt, out } from './support';
import { latexTwins } from './latex-tables';
import {
  BENCH_PDF_CACHE as CACHE,
  provisionDocs,
  provisionJournalPapers,
  provisionLatexTwins,
  provisionTableTwins,
} from './real-pdfs';
import { pageRuns, scoreTables, tableTwins, type TableScore } from './table-truth';
import { norm, orderShare, referenceRuns, withoutRunningLines } from './reading-order';

const MAX_PAGES = envInt('BENCH_PDFMD_MAX_PAGES', 60);
function pymupdfPython(): string | null {
  const venv = path.join(CACHE, 'pymupdf-venv');
  const py = path.join(venv, 'bin', 'python');
  if (!fs.existsSync(py) && spawnSync('python3', ['-m', 'venv', venv]).status !== 0) return null;
  // Pinned to a release with code: a local wheel mirror may offer a newer version number that holds none.
  if (spawnSync(py, ['-c', 'import pymupdf4llm']).status !== 0)
    spawnSync(py, ['-m', 'pip', 'install', '-q', 'pymupdf4llm==0.2.9'], { stdio: 'ignore' });
  return spawnSync(py, ['-c', 'import pymupdf4llm']).status === 0 ? py : null;
}

const PY = `
import sys, time, json, pymupdf, pymupdf4llm
doc = pymupdf.open(sys.argv[1])
pages = list(range(min(doc.page_count, int(sys.argv[3]))))
toc = [{"level": l, "title": t} for (l, t, p) in doc.get_toc() if p - 1 in pages]
t = time.time(); md = pymupdf4llm.to_markdown(doc, pages=pages); ms = (time.time() - t) * 1000
open(sys.argv[2], "w").write(md)
print(json.dumps({"ms": ms, "toc": toc}))
`;

/** pymupdf4llm on the given 1-based pages, in one call. */
const PY_PAGES = `
import sys, pymupdf, pymupdf4llm
doc = pymupdf.open(sys.argv[1])
pages = [int(p) - 1 for p in sys.argv[3].split(",")]
open(sys.argv[2], "w").write(pymupdf4llm.to_markdown(doc, pages=pages))
`;

/** A title without its section numbers ("4.1.1 X.509 certificates" and "X.509 certificates" both "certificates"). */
const titleKey = (t: string) => {
  let prev = '';
  let cur = t;
  while (cur !== prev) [prev, cur] = [cur, cur.replace(/^\s*(appendix\s+)?(\d+|[A-Z])(\.\d+)*\.?\s+/i, '')];
  return norm(cur);
};

function headingScores(md: string, outline: string[]): { p: number; r: number; n: number } {
  const truth = new Set(outline.map(titleKey).filter(Boolean));
  // Lines inside fenced code ("## a comment" of R code) are no headings.
  let fenced = false;
  const got = md
    .split('\n')
    .filter((l) => {
      if (/^(```|~~~)/.test(l)) fenced = !fenced;
      return !fenced && /^#{1,6} /.test(l);
    })
    // pymupdf4llm writes a bold title in emphasis ("## **2.1 Title**"): the markup goes before the number does.
    .map((l) => titleKey(l.replace(/^#+ /, '').replace(/[*`]+/g, '')));
  const hits = got.filter((g) => truth.has(g)).length;
  const found = new Set(got.filter((g) => truth.has(g))).size;
  return { p: got.length ? hits / got.length : 0, r: truth.size ? found / truth.size : 0, n: got.length };
}

/** A glyph on a line of its own in pdftotext -raw's text: raised or lowered (the `A` of LaTeX, an index), not a word. */
const LONE_GLYPH = /\n(\S)(?=\n)/g;

/**
 * Each reference sentence with its readings: as pdftotext -raw spaces it, and, when it holds a glyph that -raw put on
 * a line of its own (the raised `A` of the LaTeX logo: `L\nA\nTEX`), with that glyph joined to its neighbours
 * (`LATEX`): whether a raised or lowered glyph stands apart from its neighbours, the line break cannot say.
 */
function referenceSentences(pdf: string, pages: number): string[][] {
  const raw = withoutRunningLines(
    execFileSync('pdftotext', ['-raw', '-l', String(pages), '-enc', 'UTF-8', pdf, '-']).toString(),
  );
  const joined = raw
    .replace(/\f/g, '\n')
    .replace(LONE_GLYPH, '\n\u0001$1\u0001')
    .replace(/-\n/g, '\u0000')
    .replace(/\s+/g, ' ');
  return joined
    .split(/(?<=[.!?])\s+(?=[A-Z\u0001])/)
    .filter((s) => !s.includes('\u0000'))
    .map((s) => [...new Set([norm(s.replace(/\u0001/g, ' ')), norm(s.replace(/\s*\u0001\s*/g, ''))].filter(Boolean))])
    .filter(([s]) => {
      const n = s.split(' ').length;
      return n >= 8 && n <= 40;
    });
}

/** Share of the sentences (each with its readings) found whole in the text. */
const sentenceShare = (text: string, sentences: string[][]) => {
  const t = ` ${norm(text)} `;
  return sentences.length
    ? sentences.filter((readings) => readings.some((s) => t.includes(` ${s} `))).length / sentences.length
    : NaN;
};

/**
 * Markdown from layouts, the outline taken out (it is the truth) and given back beside it; also the Markdown with the
 * outline given to the rules (as the service reads it), for the outline scores.
 */
function markdownOf(layouts: PageLayout[]) {
  const outline = layouts.flatMap((l) => (l.outline ?? []).map((o) => o.title));
  const top2 = layouts.flatMap((l) => (l.outline ?? []).filter((o) => o.level <= 2).map((o) => o.title));
  const mdWithOutline = documentMarkdown(layouts).markdown;
  return {
    md: documentMarkdown(layouts.map((l) => ({ ...l, outline: undefined }))).markdown,
    outline,
    top2,
    mdWithOutline,
  };
}

/**
 * The issue's outline scores: recall of the outline's top two levels among the Markdown's headings, and the headings'
 * count over the whole outline's (goal ≤ 1.5×).
 */
function outlineScores(md: string, top2: string[], outline: string[]): { r: number; ratio: number } {
  return { r: headingScores(md, top2).r, ratio: outline.length ? headingScores(md, outline).n / outline.length : NaN };
}

async function ours(pdf: string, pages: number[]) {
  // The service's path: poppler layouts, the drawings from the content stream where the text asks for them.
  const md = await best(2, async () => markdownOf([...(await markdownPageLayouts(pdf, pages)).values()]));
  const drawn = [...(await markdownPageLayouts(pdf, pages)).values()].filter((l) => needsDrawings(l)).length;
  const text = await best(2, () => pageTextsInThread(pdf, pages));
  const poppler = await best(2, async () =>
    execFileSync('pdftotext', ['-l', String(pages.length), '-enc', 'UTF-8', pdf, '-']).toString(),
  );
  // What a request costs in the service (providers called as the activity calls them, one process each): the text
  // layer alone, against the text layer and the layouts read at once plus the rules.
  const last = pages[pages.length - 1];
  const serviceText = await best(2, () => pdfPageTexts(pdf, 1, last));
  const serviceMd = await best(2, async () => {
    const [, layouts] = await Promise.all([pdfPageTexts(pdf, 1, last), markdownPageLayouts(pdf, pages)]);
    return documentMarkdown([...layouts.values()]).markdown;
  });
  return {
    serviceTextMs: serviceText.ms,
    serviceMdMs: serviceMd.ms,
    md: md.value.md,
    outline: md.value.outline,
    top2: md.value.top2,
    mdWithOutline: md.value.mdWithOutline,
    mdMs: md.ms,
    drawn,
    textMs: text.ms,
    popplerMs: poppler.ms,
    poppler: poppler.value,
  };
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : 'n/a');

async function main() {
  const py = process.env.BENCH_PDFMD_PYMUPDF === '0' ? null : pymupdfPython();
  const only = process.env.BENCH_PDFMD_ONLY;
  const files = provisionDocs().filter((f) => !only || path.basename(f).includes(only));
  out(
    `PDF → Markdown bench: ${files.length} real documents (≤ ${MAX_PAGES} pages each) + 1 generated; pymupdf4llm ${py ? 'in its venv' : 'NOT available'}`,
  );
  out(
    `load average at the start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  out('');
  if (process.env.BENCH_PDFMD_ORDER_ONLY === '1') {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pdfmd-bench-'));
    await journalOrder(py, tmp);
    fs.rmSync(tmp, { recursive: true, force: true });
    process.exit(0);
  }
  out(
    '| document | pages | drawn | outline | ours H-prec | ours H-rec | pymu H-prec | pymu H-rec | ours sent. | pymu sent. | pdftotext sent. | ours order | pymu order | pdftotext order | md ms | pdf.js text ms | pdftotext ms | pymu ms | md/pdftotext | md/pdf.js text | request md/text |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const sums = {
    oursP: 0,
    oursR: 0,
    pyP: 0,
    pyR: 0,
    oursS: 0,
    pyS: 0,
    ptS: 0,
    n: 0,
    nH: 0,
    md: 0,
    reqMd: 0,
    reqText: 0,
    text: 0,
    pop: 0,
    pym: 0,
    order: [0, 0, 0],
  };
  const outlineRows: string[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pdfmd-bench-'));
  try {
    // Untimed warm-up: the service's worker is long-lived, its rules compiled by the JIT after a first document; the
    // first document of the table would otherwise pay that compilation alone.
    if (files[0]) {
      const { pageCount } = await describeInThread(files[0]);
      const warm = Array.from({ length: Math.min(pageCount, MAX_PAGES) }, (_, i) => i + 1);
      for (let i = 0; i < 2; i++) documentMarkdown([...(await markdownPageLayouts(files[0], warm)).values()]);
    }
    for (const file of files) {
      const { pageCount } = await describeInThread(file);
      const n = Math.min(pageCount, MAX_PAGES);
      const pages = Array.from({ length: n }, (_, i) => i + 1);
      const o = await ours(file, pages);
      let pym = { md: '', ms: NaN, toc: [] as { title: string }[] };
      if (py) {
        const mdFile = path.join(tmp, 'pym.md');
        const r = spawnSync(py, ['-c', PY, file, mdFile, String(n)], { encoding: 'utf8', maxBuffer: 1 << 26 });
        if (r.status === 0) {
          const info = JSON.parse(r.stdout.trim().split('\n').pop()!);
          pym = { md: fs.readFileSync(mdFile, 'utf8'), ms: info.ms, toc: info.toc };
        }
      }
      const sentences = referenceSentences(file, n);
      const hOurs = headingScores(o.md, o.outline);
      const hPy = headingScores(pym.md, o.outline);
      if (o.outline.length) {
        const [a, b, c] = [o.md, o.mdWithOutline, pym.md].map((m) => outlineScores(m, o.top2, o.outline));
        const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
        outlineRows.push(
          `| ${path.basename(file)} | ${n} | ${o.top2.length}/${o.outline.length} | ${pct(a.r)} | ${x(a.ratio)} | ${pct(b.r)} | ${x(b.ratio)} | ` +
            `${py ? pct(c.r) : 'n/a'} | ${py ? x(c.ratio) : 'n/a'} |`,
        );
      }
      const s = [sentenceShare(o.md, sentences), sentenceShare(pym.md, sentences), sentenceShare(o.poppler, sentences)];
      const runs = referenceRuns(file, n);
      const ord = [orderShare(o.md, runs), py ? orderShare(pym.md, runs) : NaN, orderShare(o.poppler, runs)];
      ord.forEach((x, i) => (sums.order[i] += x));
      out(
        `| ${path.basename(file)} | ${n} | ${o.drawn} | ${o.outline.length} | ${pct(hOurs.p)} | ${pct(hOurs.r)} | ${pct(hPy.p)} | ${pct(hPy.r)} | ` +
          `${pct(s[0])} | ${pct(s[1])} | ${pct(s[2])} | ${pct(ord[0])} | ${pct(ord[1])} | ${pct(ord[2])} | ${o.mdMs.toFixed(0)} | ${o.textMs.toFixed(0)} | ${o.popplerMs.toFixed(0)} | ` +
          `${Number.isFinite(pym.ms) ? pym.ms.toFixed(0) : 'n/a'} | ${(o.mdMs / o.popplerMs).toFixed(2)}× | ${(o.mdMs / o.textMs).toFixed(2)}× | ${(o.serviceMdMs / o.serviceTextMs).toFixed(2)}× |`,
      );
      sums.reqMd += o.serviceMdMs;
      sums.reqText += o.serviceTextMs;
      if (o.outline.length) {
        sums.nH++;
        sums.oursP += hOurs.p;
        sums.oursR += hOurs.r;
        sums.pyP += hPy.p;
        sums.pyR += hPy.r;
      }
      sums.n++;
      sums.oursS += s[0];
      sums.pyS += s[1];
      sums.ptS += s[2];
      sums.md += o.mdMs;
      sums.text += o.textMs;
      sums.pop += o.popplerMs;
      sums.pym += Number.isFinite(pym.ms) ? pym.ms : 0;
    }
    out('');
    out(
      'outline scores: recall of its top two levels, headings / whole outline (goal ≤ 1.5×); ours without and with it:',
    );
    out('');
    out(
      '| document | pages | top-2 / outline | ours R top-2 | ours ratio | ours+outline R top-2 | ours+outline ratio | pymu R top-2 | pymu ratio |',
    );
    out('|---|---|---|---|---|---|---|---|---|');
    for (const r of outlineRows) out(r);
    out('');
    out(
      `mean over documents with an outline (${sums.nH}): headings ours P ${pct(sums.oursP / sums.nH)} R ${pct(sums.oursR / sums.nH)}, ` +
        `pymupdf4llm P ${pct(sums.pyP / sums.nH)} R ${pct(sums.pyR / sums.nH)}`,
    );
    out(
      `mean sentences whole (${sums.n}): ours ${pct(sums.oursS / sums.n)}, pymupdf4llm ${pct(sums.pyS / sums.n)}, pdftotext ${pct(sums.ptS / sums.n)}`,
    );
    out(
      `mean reading order (${sums.n}): ours ${pct(sums.order[0] / sums.n)}, pymupdf4llm ${pct(sums.order[1] / sums.n)}, pdftotext ${pct(sums.order[2] / sums.n)}`,
    );
    out(
      `total time: Markdown ${sums.md.toFixed(0)} ms, pdf.js text ${sums.text.toFixed(0)} ms (${(sums.md / sums.text).toFixed(2)}×), ` +
        `pdftotext ${sums.pop.toFixed(0)} ms (${(sums.md / sums.pop).toFixed(2)}×), pymupdf4llm ${sums.pym.toFixed(0)} ms`,
    );
    out(
      `a request's reading (text layer, with Markdown: text and layouts at once + rules): Markdown ${sums.reqMd.toFixed(0)} ms, ` +
        `text ${sums.reqText.toFixed(0)} ms (${(sums.reqMd / sums.reqText).toFixed(2)}×); load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );

    // The generated report: tables and sentences with a known truth.
    const doc = structuredDoc();
    const file = path.join(tmp, 'report.pdf');
    fs.writeFileSync(file, await htmlToPdf(doc.html, { pageHeaders: true }));
    const { pageCount } = await describeInThread(file);
    const o = await ours(
      file,
      Array.from({ length: pageCount }, (_, i) => i + 1),
    );
    let pymMd = '';
    if (py) {
      const mdFile = path.join(tmp, 'pym.md');
      if (spawnSync(py, ['-c', PY, file, mdFile, String(pageCount)]).status === 0)
        pymMd = fs.readFileSync(mdFile, 'utf8');
    }
    const rows = [doc.unruled, [doc.ruledHeader, ...doc.ruledRows]].flat();
    const rowNorm = (r: string[]) => r.map((c) => norm(c)).join('|');
    const tableRows = (md: string) =>
      new Set(
        md
          .split('\n')
          .filter((l) => l.startsWith('|'))
          .map((l) =>
            l
              .slice(1, -1)
              .split('|')
              .map((c) => norm(c))
              .join('|'),
          ),
      );
    const rowShare = (md: string) => rows.filter((r) => tableRows(md).has(rowNorm(r))).length / rows.length;
    const truthSentences = [...doc.columnParagraphs.flatMap((p) => p.split(/(?<=\.) /))].map((p) => [norm(p)]);
    out('');
    out(`generated report (${pageCount} pages, ${rows.length} table rows, ${truthSentences.length} column sentences):`);
    out(`  table rows as GFM rows: ours ${pct(rowShare(o.md))}, pymupdf4llm ${pct(rowShare(pymMd))}`);
    out(
      `  column sentences whole: ours ${pct(sentenceShare(o.md, truthSentences))}, pymupdf4llm ${pct(sentenceShare(pymMd, truthSentences))}, ` +
        `pdftotext ${pct(sentenceShare(o.poppler, truthSentences))}`,
    );

    await journalOrder(py, tmp);
    await realTables(py, tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.exit(0);
}

/**
 * Reading order of two-column journal and conference papers (`reading-order.ts`): ours, pymupdf4llm and pdftotext,
 * per paper and the mean of the papers the rules were tuned on and of the others; and our time per page (poppler
 * layouts + rules, and the rules alone).
 */
async function journalOrder(py: string | null, tmp: string) {
  const only = process.env.BENCH_PDFMD_ONLY;
  const papers = provisionJournalPapers().filter((p) => !only || path.basename(p.file).includes(only));
  out('');
  out("reading order of two-column papers (share of pdftotext -raw's 8-word runs found in order):");
  out('');
  out(
    '| paper | set | pages | runs | ours | pymupdf4llm | pdftotext | ours ms/page (layouts + rules) | rules ms/page |',
  );
  out('|---|---|---|---|---|---|---|---|---|');
  const sums = { tune: [0, 0, 0, 0], score: [0, 0, 0, 0] };
  for (const { file, tune } of papers) {
    const { pageCount } = await describeInThread(file);
    const n = Math.min(pageCount, MAX_PAGES);
    const pages = Array.from({ length: n }, (_, i) => i + 1);
    const all = await best(2, async () => documentMarkdown([...(await markdownPageLayouts(file, pages)).values()]));
    const layouts = [...(await markdownPageLayouts(file, pages)).values()];
    const rules = await best(3, async () => documentMarkdown(layouts));
    let pym = '';
    if (py) {
      const mdFile = path.join(tmp, 'pym-order.md');
      if (spawnSync(py, ['-c', PY, file, mdFile, String(n)]).status === 0) pym = fs.readFileSync(mdFile, 'utf8');
    }
    const plain = execFileSync('pdftotext', ['-l', String(n), '-enc', 'UTF-8', file, '-']).toString();
    const runs = referenceRuns(file, n);
    const s = [orderShare(all.value.markdown, runs), py ? orderShare(pym, runs) : NaN, orderShare(plain, runs)];
    const acc = tune ? sums.tune : sums.score;
    s.forEach((x, i) => (acc[i] += x));
    acc[3]++;
    out(
      `| ${path.basename(file)} | ${tune ? 'tune' : 'score'} | ${n} | ${runs.length} | ${pct(s[0])} | ${pct(s[1])} | ${pct(s[2])} | ` +
        `${(all.ms / n).toFixed(1)} | ${(rules.ms / n).toFixed(1)} |`,
    );
  }
  out('');
  for (const [name, a] of Object.entries(sums))
    if (a[3])
      out(
        `mean reading order, ${name} set (${a[3]}): ours ${pct(a[0] / a[3])}, pymupdf4llm ${pct(a[1] / a[3])}, pdftotext ${pct(a[2] / a[3])}`,
      );
}

/** Tables of the documents with an HTML twin, on the pages that hold them: ours, pymupdf4llm, pdftotext. */
async function realTables(py: string | null, tmp: string) {
  const only = process.env.BENCH_PDFMD_ONLY;
  const twins = [
    ...tableTwins(provisionTableTwins().filter((t) => !only || path.basename(t.pdf).includes(only))),
    ...latexTwins(provisionLatexTwins().filter((t) => !only || path.basename(t.pdf).includes(only))),
  ];
  out('');
  out('tables of documents with an HTML or LaTeX twin (same source), on the pages holding them:');
  out('');
  out(
    '| document | tables (rows, cells) | pages | ours detected | pymu detected | pdftotext detected | ours false | pymu false | ours cells | pymu cells | pdftotext cells | ours cells whole | pymu cells whole | pdftotext cells whole |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const f = (s: TableScore, k: 'det' | 'false' | 'cells' | 'whole') =>
    k === 'det'
      ? `${s.detected}/${s.tables}`
      : k === 'false'
        ? `${s.falseTables}/${s.gfmTables}`
        : k === 'cells'
          ? pct(s.cellsFound / s.cells)
          : pct(s.cellsWhole / s.longCells);
  for (const { pdf, tables } of twins) {
    const pages = tables.flatMap((t) => t.pages);
    let ours = '';
    let plain = '';
    for (const run of pageRuns(pages)) {
      ours += `${documentMarkdown([...(await markdownPageLayouts(pdf, run)).values()]).markdown}\n\n`;
      plain += execFileSync('pdftotext', [
        '-f',
        String(run[0]),
        '-l',
        String(run[run.length - 1]),
        '-enc',
        'UTF-8',
        pdf,
        '-',
      ]);
    }
    let pym = '';
    if (py) {
      const mdFile = path.join(tmp, 'pym-tables.md');
      if (spawnSync(py, ['-c', PY_PAGES, pdf, mdFile, [...new Set(pages)].join(',')]).status === 0)
        pym = fs.readFileSync(mdFile, 'utf8');
    }
    if (process.env.BENCH_PDFMD_TABLES_DUMP)
      fs.writeFileSync(`${process.env.BENCH_PDFMD_TABLES_DUMP}-${path.basename(pdf)}.md`, ours);
    const [o, p, t] = [scoreTables(ours, tables), scoreTables(pym, tables), scoreTables(plain, tables)];
    const rows = tables.reduce((a, x) => a + x.rows.length, 0);
    out(
      `| ${path.basename(pdf)} | ${tables.length} (${rows}, ${o.cells}) | ${new Set(pages).size} | ${f(o, 'det')} | ${py ? f(p, 'det') : 'n/a'} | ${f(t, 'det')} | ` +
        `${f(o, 'false')} | ${py ? f(p, 'false') : 'n/a'} | ${f(o, 'cells')} | ${py ? f(p, 'cells') : 'n/a'} | ${f(t, 'cells')} | ` +
        `${f(o, 'whole')} | ${py ? f(p, 'whole') : 'n/a'} | ${f(t, 'whole')} |`,
    );
  }
}

await main();
