/**
 * Real, freely licensed PDFs for the benches, fetched into the engine cache once and the same every run: Debian doc
 * packages (`apt-get download`, unpacked with `dpkg-deb -x`: GLPK (GPL), GnuTLS (GFDL), libidn2 (GFDL), Asymptote
 * (LGPL/GPL), R manuals (GPL), texlive-publishers-doc (LPPL)) and two already on Debian systems (libtasn1,
 * shared-mime-info).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inputOrder } from './latex-tables';

export const BENCH_PDF_CACHE = path.join(
  process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'),
  'bench-pdfmd',
);
const ROOT = path.join(BENCH_PDF_CACHE, 'root');
const DEBS = ['glpk-doc', 'gnutls-doc', 'libidn2-doc', 'asymptote-doc', 'r-doc-pdf'];
const DOCS = [
  'usr/share/doc/glpk-doc/glpk.pdf',
  'usr/share/doc/glpk-doc/graphs.pdf',
  'usr/share/doc/glpk-doc/cnfsat.pdf',
  'usr/share/doc/gnutls-doc/gnutls.pdf',
  'usr/share/doc/libidn2-doc/libidn2.pdf',
  'usr/share/doc/asymptote/asy-latex.pdf',
  'usr/share/doc/asymptote/CAD.pdf',
  'usr/share/R/doc/manual/R-FAQ.pdf',
  'usr/share/R/doc/manual/R-data.pdf',
];
const SYSTEM_DOCS = [
  '/usr/share/doc/libtasn1-doc/libtasn1.pdf',
  '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf',
];

/** The PDF Markdown bench's documents, downloaded and unpacked on first use. */
export function provisionDocs(): string[] {
  fs.mkdirSync(ROOT, { recursive: true });
  if (!DOCS.every((d) => fs.existsSync(path.join(ROOT, d)))) {
    const debs = path.join(BENCH_PDF_CACHE, 'debs');
    fs.mkdirSync(debs, { recursive: true });
    execFileSync('apt-get', ['download', ...DEBS], { cwd: debs, stdio: 'ignore' });
    for (const f of fs.readdirSync(debs).filter((n) => n.endsWith('.deb')))
      execFileSync('dpkg-deb', ['-x', path.join(debs, f), ROOT]);
  }
  return [...DOCS.map((d) => path.join(ROOT, d)), ...SYSTEM_DOCS.filter((d) => fs.existsSync(d))];
}

/**
 * PDFs with an HTML twin made from the same Texinfo source (the table truth): GnuTLS's from `gnutls-doc`, R's from
 * `r-doc-html` (fetched here on first use; R-data.pdf has no data table, R-lang.pdf has eight, R-FAQ.pdf one).
 */
export function provisionTableTwins(): { pdf: string; html: string }[] {
  provisionDocs();
  const rHtml = 'usr/share/doc/r-doc-html/manual';
  if (!fs.existsSync(path.join(ROOT, rHtml, 'R-lang.html'))) {
    const debs = path.join(BENCH_PDF_CACHE, 'debs-html');
    fs.mkdirSync(debs, { recursive: true });
    execFileSync('apt-get', ['download', 'r-doc-html'], { cwd: debs, stdio: 'ignore' });
    for (const f of fs.readdirSync(debs).filter((n) => n.endsWith('.deb')))
      execFileSync('dpkg-deb', ['-x', path.join(debs, f), ROOT]);
  }
  return [
    { pdf: 'usr/share/doc/gnutls-doc/gnutls.pdf', html: 'usr/share/doc/gnutls-doc/html/gnutls.html' },
    { pdf: 'usr/share/R/doc/manual/R-lang.pdf', html: `${rHtml}/R-lang.html` },
    { pdf: 'usr/share/R/doc/manual/R-FAQ.pdf', html: `${rHtml}/R-FAQ.html` },
  ].map((t) => ({ pdf: path.join(ROOT, t.pdf), html: path.join(ROOT, t.html) }));
}

const PUB = 'usr/share/doc/texlive-doc/latex';
/**
 * Two-column papers of five publishers' LaTeX classes (Debian's `texlive-publishers-doc`, LPPL), each page checked
 * to be set in two columns below a full-width title block. `tune` are the ones the reading-order rules were tuned on;
 * the others are only scored.
 */
const JOURNAL_PAPERS: { file: string; tune: boolean }[] = [
  { file: 'revtex4-1/sample/aps/apssamp.pdf', tune: true },
  { file: 'acmart/samples/sample-sigconf.pdf', tune: true },
  { file: 'elsarticle/elstest-5p.pdf', tune: true },
  { file: 'ieeepes/ieeepes_doc.pdf', tune: true },
  { file: 'revtex4-1/sample/aip/aipsamp.pdf', tune: false },
  { file: 'acmart/samples/sample-sigplan.pdf', tune: false },
  { file: 'els-cas-templates/doc/dc-sample.pdf', tune: false },
  { file: 'mnras/mnras_guide.pdf', tune: false },
];

/** The two-column journal and conference papers, downloaded and unpacked on first use. */
export function provisionJournalPapers(): { file: string; tune: boolean }[] {
  const root = path.join(BENCH_PDF_CACHE, 'root-pub');
  const papers = JOURNAL_PAPERS.map((p) => ({ ...p, file: path.join(root, PUB, p.file) }));
  if (!papers.every((p) => fs.existsSync(p.file))) {
    const debs = path.join(BENCH_PDF_CACHE, 'debs-pub');
    fs.mkdirSync(debs, { recursive: true });
    if (!fs.readdirSync(debs).some((n) => n.endsWith('.deb')))
      execFileSync('apt-get', ['download', 'texlive-publishers-doc'], { cwd: debs, stdio: 'ignore' });
    for (const f of fs.readdirSync(debs).filter((n) => n.endsWith('.deb')))
      execFileSync('dpkg-deb', ['-x', path.join(debs, f), root]);
  }
  return papers;
}

/** The page count `pdfinfo` reports, or 0 when it cannot read the file. */
function pageCount(file: string): number {
  try {
    const info = execFileSync('pdfinfo', [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Every PDF the same packages hold (not only the Markdown bench's) with `min`..`max` pages, each file once (the
 * packages link some under several names), sorted by pages.
 */
export function realPdfsWithPages(min: number, max: number): { file: string; pages: number; bytes: number }[] {
  provisionDocs();
  const seen = new Set<string>();
  const found: { file: string; pages: number; bytes: number }[] = [];
  const files = [
    ...fs
      .readdirSync(ROOT, { recursive: true, withFileTypes: true })
      .filter((e) => e.name.endsWith('.pdf'))
      .map((e) => path.join(e.parentPath, e.name)),
    ...SYSTEM_DOCS,
  ];
  for (const f of files) {
    if (!fs.existsSync(f)) continue;
    const real = fs.realpathSync(f);
    if (seen.has(real)) continue;
    seen.add(real);
    const pages = pageCount(real);
    if (pages >= min && pages <= max) found.push({ file: real, pages, bytes: fs.statSync(real).size });
  }
  return found.sort((a, b) => a.pages - b.pages);
}

/**
 * German LaTeX manuals with their LaTeX sources (the table truth), from `texlive-lang-german` (LPPL/GPL docs): the
 * booktabs manual's translation (`booktabs-de`, booktabs rules drawn as filled rectangles, a \\cmidrule group label)
 * and "l2kurz" (LaTeX2e-Kurzbeschreibung, longtables with wrapped cells).
 */
export function provisionLatexTwins(): { pdf: string; sources: string[] }[] {
  const root = path.join(BENCH_PDF_CACHE, 'root-german');
  const doc = path.join(root, 'usr/share/doc/texlive-doc/latex');
  if (!fs.existsSync(path.join(doc, 'lshort-german/l2kurz.pdf'))) {
    const debs = path.join(BENCH_PDF_CACHE, 'debs-german');
    fs.mkdirSync(debs, { recursive: true });
    execFileSync('apt-get', ['download', 'texlive-lang-german'], { cwd: debs, stdio: 'ignore' });
    for (const f of fs.readdirSync(debs).filter((n) => n.endsWith('.deb')))
      execFileSync('dpkg-deb', ['-x', path.join(debs, f), root]);
  }
  const l2 = path.join(doc, 'lshort-german');
  return [
    { pdf: path.join(doc, 'booktabs-de/booktabs-de.pdf'), sources: [path.join(doc, 'booktabs-de/booktabs-de.dtx.gz')] },
    {
      pdf: path.join(l2, 'l2kurz.pdf'),
      sources: inputOrder(path.join(l2, 'l2kurz.tex.gz')),
    },
  ];
}
