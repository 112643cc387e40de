import { execFile } from 'node:child_process';

/** What curl reported for one README example. */
export interface Answer {
  /** The HTTP status (`%{http_code}`). */
  http: number;
  /** The parsed JSON body, or the text. */
  body: any;
  text: string;
  /** The file curl wrote (`-o`, `-OJ`: `%{filename_effective}`), relative to where it ran, or ''. */
  file: string;
}

const MARK = '@@readme-example';

/** The curl statement told to end its output with a line holding its HTTP status and the file it wrote. */
export const reportingStatus = (curlStatement: string): string =>
  curlStatement.replace(/^curl /, `curl -w '\\n${MARK} %{http_code} %{filename_effective}' `);

/** Reads the output of a statement made by `reportingStatus`; null without the status line. */
export function readAnswer(stdout: string): Answer | null {
  const i = stdout.lastIndexOf(`\n${MARK} `);
  if (i < 0) return null;
  const [, http, file = ''] = /^(\d+) ?(.*)$/.exec(stdout.slice(i + MARK.length + 2).trim()) ?? [];
  const text = stdout.slice(0, i);
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { http: Number(http), body, text, file };
}

/** Runs a script with bash in `cwd`; never throws (the exit code is in the answer). */
export function bash(
  script: string,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The value at a dotted path (`data.frames.0.path`). */
export const at = (obj: unknown, dotted: string): unknown =>
  dotted.split('.').reduce<any>((o, k) => (o === null || o === undefined ? undefined : o[k]), obj);

/** Present and not empty: a non-blank string, a non-empty array or object, a finite number, a boolean. */
export const nonEmpty = (v: unknown): boolean =>
  typeof v === 'string'
    ? v.trim() !== ''
    : Array.isArray(v)
      ? v.length > 0
      : typeof v === 'number'
        ? Number.isFinite(v)
        : typeof v === 'boolean' || (typeof v === 'object' && v !== null && Object.keys(v).length > 0);

/** The operation of an OpenAPI document that serves `method path` (a templated segment matches any value; the last
 * one, the rest of the path, as the files route's does). */
export function operationOf(doc: any, method: string, path: string): { route: string; op: any } | undefined {
  for (const [route, ops] of Object.entries(doc.paths as Record<string, any>)) {
    const re = new RegExp(`^${route.replace(/\{[^}]+\}$/, '.+').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(path) && ops[method.toLowerCase()]) return { route, op: ops[method.toLowerCase()] };
  }
  return undefined;
}

/** The schema a `$ref` of the document names, followed until it is not a `$ref`. */
const deref = (doc: any, schema: any): any =>
  schema?.$ref ? deref(doc, at(doc, schema.$ref.replace(/^#\//, '').replaceAll('/', '.'))) : schema;

/** Whether a schema (through `$ref`s and `allOf`/`anyOf`/`oneOf`) has a field at the path's segments (`0`: items). */
export function hasField(doc: any, schema: any, segs: string[]): boolean {
  const s = deref(doc, schema);
  if (!s) return false;
  if (!segs.length) return true;
  if (['allOf', 'anyOf', 'oneOf'].some((k) => (s[k] ?? []).some((x: unknown) => hasField(doc, x, segs)))) return true;
  const [head, ...rest] = segs;
  return head === '0' ? hasField(doc, s.items, rest) : hasField(doc, s.properties?.[head], rest);
}
