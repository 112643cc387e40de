import fs from 'node:fs';

/**
 * The shell examples of a Markdown file, read the way bash reads them: every ```sh block is cut into statements
 * (newlines and `;` outside quotes end one, a backslash-newline continues it, quoted strings may span lines, `#` at
 * the start of a word begins a comment). The README-examples suite runs the `curl` statements; the `KEY=`/`H=`
 * assignments are the prelude each of them runs after.
 */
export interface ShellStatement {
  /** 1-based line of the README where the statement starts. */
  line: number;
  /** The statement as written, continuations and multi-line quotes included, without its comment. */
  text: string;
  /** The comment that ends the statement's (last) line, without the `#`, or ''. */
  comment: string;
}

export interface CurlExample extends ShellStatement {
  /** `-X`, else POST with `-d`/`-F`, else GET. */
  method: string;
  /** The path of the URL that names `localhost:8080`, without its query (placeholders kept). */
  path: string;
  /** The URL's query string, without `?`, or ''. */
  query: string;
  /** Shell words after quote removal (for flags: `-F`, `-d`, `-o`, headers). */
  words: string[];
}

/** The ```sh blocks of a Markdown text: their body and the line number of their first body line. */
export function shBlocks(markdown: string): { firstLine: number; body: string }[] {
  const lines = markdown.split('\n');
  const blocks: { firstLine: number; body: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    if (end >= lines.length) throw new Error(`README line ${i + 1}: a \`\`\`sh block is never closed`);
    blocks.push({ firstLine: start + 1, body: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Cuts a shell text into statements (see the module comment). Throws on an unterminated quote. */
export function statements(body: string, firstLine = 1): ShellStatement[] {
  const out: ShellStatement[] = [];
  let text = '';
  let comment = '';
  let line = firstLine;
  let startLine = firstLine;
  let quote: "'" | '"' | null = null;
  const flush = () => {
    const t = text.trim();
    if (t) out.push({ line: startLine, text: t, comment: comment.trim() });
    text = '';
    comment = '';
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (!text.trim()) startLine = line;
    if (quote) {
      text += c;
      if (c === '\n') line++;
      if (c === quote) quote = null;
      else if (quote === '"' && c === '\\' && i + 1 < body.length) {
        text += body[++i];
        if (body[i] === '\n') line++;
      }
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      text += c;
    } else if (c === '\\' && body[i + 1] === '\n') {
      text += '\\\n';
      i++;
      line++;
    } else if (c === '\\' && i + 1 < body.length) {
      text += c + body[++i];
    } else if (c === '#' && (text === '' || /\s$/.test(text))) {
      const end = body.indexOf('\n', i);
      comment = body.slice(i + 1, end < 0 ? body.length : end);
      i = (end < 0 ? body.length : end) - 1;
    } else if (c === '\n') {
      flush();
      line++;
    } else if (c === ';') flush();
    else text += c;
  }
  if (quote) throw new Error(`README line ${startLine}: a ${quote} quote is never closed`);
  flush();
  return out;
}

/** Shell words of a statement after quote removal and `$VAR`s left as written (enough to read curl's flags). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let w: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else w += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && /["\\$`]/.test(text[i + 1] ?? '')) w += text[++i];
      else w += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      w ??= '';
    } else if (c === '\\' && text[i + 1] === '\n') i++;
    else if (c === '\\') w = (w ?? '') + (text[++i] ?? '');
    else if (/\s/.test(c)) {
      if (w !== null) words.push(w);
      w = null;
    } else w = (w ?? '') + c;
  }
  if (w !== null) words.push(w);
  return words;
}

/** Reads a curl statement's method, path and query (the URL is the word that names `localhost:8080`). */
export function parseCurl(st: ShellStatement): CurlExample {
  const words = shellWords(st.text);
  if (words[0] !== 'curl') throw new Error(`README line ${st.line}: not a curl command: ${st.text}`);
  const urls = words.filter((w) => /^(https?:\/\/)?localhost:8080\//.test(w));
  if (urls.length !== 1)
    throw new Error(`README line ${st.line}: expected one localhost:8080 URL, found ${urls.length}`);
  const url = new URL(urls[0].startsWith('http') ? urls[0] : `http://${urls[0]}`);
  const x = words.findIndex((w) => w === '-X' || w === '--request');
  const sendsBody = words.some((w) => /^(-d|--data(-raw|-binary)?|-F|--form)$/.test(w));
  return {
    ...st,
    words,
    method: x >= 0 ? words[x + 1].toUpperCase() : sendsBody ? 'POST' : 'GET',
    path: decodeURIComponent(url.pathname),
    query: url.search.replace(/^\?/, ''),
  };
}

/** Every statement of every ```sh block of the file, with its block's index. */
export function readmeStatements(file: string): (ShellStatement & { block: number })[] {
  return shBlocks(fs.readFileSync(file, 'utf8')).flatMap((b, block) =>
    statements(b.body, b.firstLine).map((s) => ({ ...s, block })),
  );
}

/** Splits at commas outside brackets and braces. */
function topLevelItems(s: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '[' || ch === '{') depth++;
    if (ch === ']' || ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      items.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  items.push(cur.trim());
  return items;
}

/**
 * The answer fields a curl example's comment promises, as dotted paths (`.0.` is an array's first element). Only the
 * part before a `;` counts, read as a list after an optional `data:` or `data.x:` (default prefix `data`):
 * `a, b {x, y}, c [{m, n}], ...` → `data.a`, `data.b.x`, `data.b.y`, `data.c`, `data.c.0.m`, `data.c.0.n`;
 * `data.tracks: [{name, session_count}] …` → `data.tracks`, `data.tracks.0.name`, …; `data.target_groups (…)` →
 * `data.target_groups`. A comment that is not such a list (prose: "flips the flag", "202 while running") promises
 * nothing.
 */
export function promisedFields(comment: string): string[] {
  let c = comment.split(';')[0].trim();
  const single = /^(data(?:\.\w+)+)(?![\w.]|\s*:)/.exec(c);
  if (single) return [single[1]];
  let prefix = 'data';
  const head = /^(data(?:\.\w+)*):\s*/.exec(c);
  if (head) {
    prefix = head[1];
    c = c.slice(head[0].length);
  }
  const names = (inner: string) => topLevelItems(inner).filter((x) => x !== '' && x !== '...' && x !== '…');
  const ids = (xs: string[]) => xs.every((x) => /^\w+$/.test(x));
  const whole = /^\[\{([^}]*)\}\]/.exec(c);
  if (whole && head) {
    const xs = names(whole[1]);
    return [prefix, ...(ids(xs) ? xs.map((x) => `${prefix}.0.${x}`) : [])];
  }
  const out: string[] = [];
  for (const item of names(c)) {
    const m = /^(\w+)(?:\s*\{([^{}]*)\}|\s*\[\{([^{}]*)\}\])?$/.exec(item);
    if (!m) return [];
    const [, name, obj, list] = m;
    const inner = names(obj ?? list ?? '');
    if (!ids(inner)) return [];
    if (obj !== undefined) out.push(...inner.map((x) => `${prefix}.${name}.${x}`));
    else out.push(`${prefix}.${name}`, ...inner.map((x) => `${prefix}.${name}.0.${x}`));
  }
  return out;
}
