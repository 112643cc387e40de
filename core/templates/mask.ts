/**
 * Frontmatter masking: `{{tags|…}}` is not valid YAML, so before the frontmatter is parsed each placeholder is
 * replaced by a plain-scalar token (`__tplph0__`, `__tplph1__`, …), the i-th token standing for the i-th
 * frontmatter placeholder. The parsed structure keeps the tokens; filling swaps them for values.
 */

const MASK_RE = /__tplph(\d+)__/g;

/** The stand-in for the i-th frontmatter placeholder while the YAML is parsed. */
export function maskToken(i: number): string {
  return `__tplph${i}__`;
}

/** Replaces mask tokens in `s` with what `replace` returns for the placeholder index. */
export function unmask(s: string, replace: (index: number) => string): string {
  return s.replace(MASK_RE, (_m, i: string) => replace(Number(i)));
}

/** The placeholder index when `s` is exactly one mask token, else null. */
export function wholeToken(s: string): number | null {
  const m = /^__tplph(\d+)__$/.exec(s);
  return m ? Number(m[1]) : null;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when a masked YAML value (or key) holds a placeholder token anywhere. */
export function hasToken(v: unknown): boolean {
  if (typeof v === 'string') return /__tplph\d+__/.test(v);
  if (Array.isArray(v)) return v.some(hasToken);
  if (isPlainObject(v)) return Object.entries(v).some(([k, x]) => hasToken(k) || hasToken(x));
  return false;
}

/** Deep copy of a masked YAML value: string values through `fixValue`, mapping keys through `fixKey`. */
export function mapStrings(v: unknown, fixValue: (s: string) => unknown, fixKey: (s: string) => string): unknown {
  if (typeof v === 'string') return fixValue(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, fixValue, fixKey));
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, fixKey(k), mapStrings(x, fixValue, fixKey));
    return out;
  }
  return v;
}

/** `record[key] = value` that also works for `__proto__` (as an ordinary own key). */
export function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
