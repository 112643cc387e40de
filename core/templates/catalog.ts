import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTemplate } from './parse';

/**
 * The template catalog on disk (contract §5): `<dir>/<Name>.md`, language variants `<dir>/<Name>_<lang>.md`.
 * Names are checked against {@link TEMPLATE_NAME_RE} before any path is built, so a name can never leave `dir`.
 */

/** `templates/` at the repository root. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../templates', import.meta.url));

/** Valid template names: no separators, no dots, so no path traversal. */
export const TEMPLATE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/** A language tag as accepted for variants: `de`, `en`, `pt-BR`. */
const LANG_RE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/;

/** `<Base>_<lang>.md`: a two-letter code, optionally with a region or script. */
const VARIANT_FILE_RE = /^([A-Za-z0-9][A-Za-z0-9_-]*?)_([a-z]{2}(?:-[A-Za-z0-9]{2,8})?)\.md$/;

export interface LoadedTemplate {
  /** The name asked for. */
  name: string;
  /** Absolute path of the file read. */
  resolvedFile: string;
  source: string;
  /** The variant's language when a `<Name>_<lang>.md` file was used, else null. */
  language: string | null;
}

export interface TemplateSummary {
  /** Base name, without language suffix. */
  name: string;
  /** Languages available: the variants' suffixes plus the base file's frontmatter `language`, sorted. */
  languages: string[];
  title?: string;
  description?: string;
  /** Whether `<name>.md` itself exists (else only language variants do). */
  hasBase: boolean;
}

/** Whether `name` is an acceptable template name. */
export function isValidTemplateName(name: unknown): name is string {
  return typeof name === 'string' && TEMPLATE_NAME_RE.test(name);
}

async function readIfFile(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
    throw err;
  }
}

function languageCandidates(lang: string | undefined | null): string[] {
  if (!lang) return [];
  const tag = lang.trim().replace(/_/g, '-');
  if (!LANG_RE.test(tag)) return [];
  const [primary = '', ...rest] = tag.split('-');
  const full = [primary.toLowerCase(), ...rest].join('-');
  return full === primary.toLowerCase() ? [full] : [full, primary.toLowerCase()];
}

/**
 * Loads template `name`: `<Name>_<lang>.md` when `lang` is given and that file exists (`de-AT` tries `_de-AT`,
 * then `_de`), else `<Name>.md`. Null for an invalid name or when no file exists. An invalid `lang` is ignored.
 */
export async function loadTemplate(dir: string, name: string, lang?: string | null): Promise<LoadedTemplate | null> {
  if (!isValidTemplateName(name)) return null;
  const root = path.resolve(dir);
  const candidates: { file: string; language: string | null }[] = [
    ...languageCandidates(lang).map((l) => ({ file: `${name}_${l}.md`, language: l })),
    { file: `${name}.md`, language: null },
  ];
  for (const c of candidates) {
    const resolvedFile = path.join(root, c.file);
    if (path.dirname(resolvedFile) !== root) continue;
    const source = await readIfFile(resolvedFile);
    if (source !== null) return { name, resolvedFile, source, language: c.language };
  }
  return null;
}

/**
 * Every template in `dir`, variants grouped under their base name, sorted by name. Title and description come
 * from the base file's static frontmatter metadata (else from the first variant's). A missing directory lists
 * nothing.
 */
export async function listTemplates(dir: string): Promise<TemplateSummary[]> {
  let entries: string[];
  try {
    const dirents = await readdir(path.resolve(dir), { withFileTypes: true });
    entries = dirents.filter((e) => e.isFile() || e.isSymbolicLink()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const groups = new Map<string, { base: string | null; variants: Map<string, string> }>();
  const group = (name: string) => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { base: null, variants: new Map() }));
    return g;
  };
  for (const file of entries.sort()) {
    if (!file.endsWith('.md') || !isValidTemplateName(file.slice(0, -3))) continue;
    const variant = VARIANT_FILE_RE.exec(file);
    if (variant?.[1] && variant[2]) group(variant[1]).variants.set(variant[2], file);
    else group(file.slice(0, -3)).base = file;
  }

  const out: TemplateSummary[] = [];
  for (const [name, g] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const languages = new Set(g.variants.keys());
    const metaFile = g.base ?? [...g.variants.values()][0];
    const source = metaFile ? await readIfFile(path.join(path.resolve(dir), metaFile)) : null;
    const meta = source === null ? {} : parseTemplate(source).metadata;
    if (g.base && meta.language) languages.add(meta.language.toLowerCase());
    const summary: TemplateSummary = { name, languages: [...languages].sort(), hasBase: g.base !== null };
    if (meta.title) summary.title = meta.title;
    if (meta.description) summary.description = meta.description;
    out.push(summary);
  }
  return out;
}
