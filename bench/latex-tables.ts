/**
 * Table truth from LaTeX sources (the documents' own, as their Debian doc packages ship them): each `tabular`,
 * `tabular*`, `tabularx` or `longtable` environment's rows and cells, rules and spacing commands dropped, a
 * `\multicolumn{n}` cell as its text and n − 1 empty cells (as a spanning cell reads in its first column), German
 * shorthands (`"a`, `\"u`, `\ss`) as letters, other commands reduced to their last argument. A `.dtx` file's
 * documentation lines (`% ...`) are its source. Cells normalised as `normCell`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { locateTables, normCell, type Rows, type TruthTable } from './table-truth';

const ENV = /\\begin\{(tabular\*?|tabularx|longtable)\}/g;

/** The index just past the balanced `{...}` group at `i` (whitespace and `[...]` before it skipped). */
function skipGroup(s: string, i: number): number {
  while (/\s/.test(s[i] ?? '')) i++;
  if (s[i] === '[') i = s.indexOf(']', i) + 1;
  while (/\s/.test(s[i] ?? '')) i++;
  if (s[i] !== '{') return i;
  let depth = 0;
  for (; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '{') depth++;
    else if (s[i] === '}' && --depth === 0) return i + 1;
  }
  return i;
}

const UMLAUT: Record<string, string> = { a: 'ä', o: 'ö', u: 'ü', A: 'Ä', O: 'Ö', U: 'Ü', s: 'ß' };

/** A cell's LaTeX as its printed text, roughly. */
function cellText(t: string): string {
  let s = t
    // Code shown inline keeps its command names (`\\tiny` prints as "\\tiny"): only its markup characters go.
    .replace(/\\(?:verb|lstinline)(\[[^\]]*\])?([^a-zA-Z\s])(.*?)\2/g, (_, _o, _d, v: string) =>
      v.replace(/[\\{}]/g, ' '),
    )
    .replace(/\\"\{?([aouAOU])\}?/g, (_, c: string) => UMLAUT[c])
    .replace(/"([aouAOUs])/g, (_, c: string) => UMLAUT[c])
    .replace(/\\ss\b\{?\}?/g, 'ß')
    .replace(/\\([$&%#_{}])/g, '$1')
    .replace(/~/g, ' ');
  for (let k = 0; k < 5; k++) s = s.replace(/\\[a-zA-Z@]+\*?(\[[^\]]*\])?\{([^{}]*)\}/g, '$2');
  return normCell(s.replace(/\\[a-zA-Z@]+\*?/g, ' ').replace(/[{}$]/g, ''));
}

/** One row's cells: `&` outside braces splits them, `\multicolumn{n}{spec}{text}` fills n. */
function rowCells(row: string): string[] {
  const cells: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < row.length; i++) {
    const ch = row[i];
    if (ch === '\\') {
      cur += ch + (row[i + 1] ?? '');
      i++;
      continue;
    }
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (ch === '&' && depth === 0) [cells[cells.length], cur] = [cur, ''];
    else cur += ch;
  }
  cells.push(cur);
  return cells.flatMap((c) => {
    const m = /^\s*\\multicolumn\{(\d+)\}\{[^{}]*\}\{([\s\S]*)\}\s*$/.exec(c);
    if (!m) return [cellText(c)];
    return [cellText(m[2]), ...Array.from({ length: Number(m[1]) - 1 }, () => '')];
  });
}

const RULES = /\\(toprule|midrule|bottomrule|hline|addlinespace)(\[[^\]]*\])?/g;

/** The tables of a LaTeX (or `.dtx`) source, in source order; rows without text dropped. */
export function latexTables(source: string): Rows[] {
  const tex = source
    .split('\n')
    .map((l) => l.replace(/^%(?!%)\s?/, '').replace(/(?<!\\)%.*$/, ''))
    .join('\n')
    // Code shown verbatim is no table, whatever it holds.
    .replace(/\\begin\{(verbatim\*?|lstlisting|Verbatim)\}[\s\S]*?\\end\{\1\}/g, ' ');
  const out: Rows[] = [];
  for (const m of tex.matchAll(ENV)) {
    const env = m[1];
    let i = m.index + m[0].length;
    if (env !== 'tabular' && env !== 'longtable') i = skipGroup(tex, i);
    i = skipGroup(tex, i);
    const end = tex.indexOf(`\\end{${env}}`, i);
    if (end < 0) continue;
    // A longtable's head and foot repeated on every page are read once: its first head, then its body.
    const parts = tex.slice(i, end).split(/\\end(?:firsthead|head|lastfoot|foot)\b/);
    const first = /\\endfirsthead\b/.test(tex.slice(i, end)) ? parts[0] : '';
    const body = (parts.length > 1 ? first + parts[parts.length - 1] : parts[0])
      .replace(/\\(label|index)\{[^{}]*\}/g, ' ')
      .replace(/\\caption(\[[^\]]*\])?\{[^{}]*(\{[^{}]*\}[^{}]*)*\}/g, ' ')
      .replace(RULES, ' ')
      .replace(/\\(cmidrule|cline)(\([^)]*\))?\{[^}]*\}/g, ' ');
    const rows = body
      .split(/\\\\(\[[^\]]*\])?/)
      .filter((r) => r !== undefined && !/^\[/.test(r))
      .map(rowCells)
      .filter((r) => r.some((c) => c !== ''));
    const width = Math.max(0, ...rows.map((r) => r.length));
    if (rows.length > 0) out.push(rows.map((r) => [...r, ...Array.from({ length: width - r.length }, () => '')]));
  }
  return out;
}

/**
 * The LaTeX twins: a PDF and the sources it was made from (gzipped or not; read as UTF-8, or Latin-1 where that
 * fails), its tables found in its pages.
 */
export function latexTwins(
  pairs: readonly { pdf: string; sources: string[] }[],
): { pdf: string; tables: TruthTable[] }[] {
  const read = (f: string) => {
    const b = execFileSync('zcat', ['-f', f], { maxBuffer: 1 << 26 });
    const u = b.toString('utf8');
    return u.includes('\uFFFD') ? b.toString('latin1') : u;
  };
  return pairs
    .filter((p) => fs.existsSync(p.pdf) && p.sources.every((s) => fs.existsSync(s)))
    .map((p) => ({ pdf: p.pdf, tables: locateTables(p.pdf, latexTables(p.sources.map(read).join('\n'))) }));
}

/** A LaTeX main file and the files it `\\input`s, in its order (gzipped as Debian ships them, or not). */
export function inputOrder(main: string): string[] {
  if (!fs.existsSync(main)) return [];
  const tex = execFileSync('zcat', ['-f', main], { encoding: 'utf8' });
  const dir = path.dirname(main);
  const inputs = [...tex.matchAll(/^\\input\{([^}]+)\}/gm)].map((m) =>
    [`${m[1]}.tex.gz`, `${m[1]}.tex`].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f)),
  );
  return [main, ...inputs.filter((f): f is string => f !== undefined)];
}
