/**
 * The OpenDocument package parts every ODF reader needs (ODF 1.2 part 3): the `mimetype` entry naming the kind,
 * `content.xml`, `meta.xml` (title, creator, language, page count), and the styles that say what a span's emphasis
 * is and whether a list is numbered (automatic styles in content.xml, common ones in styles.xml).
 */
import { DocumentError, type ReadLimits } from '../model';
import { child, elements, parseXml, path, textOf, type XmlElement } from '../xml';
import type { ZipArchive } from '../zip';
import type { RunStyle } from './ooxml-inline';

export interface OdfMeta {
  title?: string;
  author?: string;
  language?: string;
  pageCount?: number;
}

/** A style's emphasis, and per list style the levels (1-based) that are numbered. */
export interface OdfStyles {
  text: Map<string, RunStyle>;
  numberedLevels: Map<string, Set<number>>;
  /** Table styles that hide their table (`table:display="false"`: a hidden sheet). */
  hiddenTables: Set<string>;
}

async function readXml(
  zip: ZipArchive,
  name: string,
  limits: ReadLimits,
  skip?: ReadonlySet<string>,
): Promise<XmlElement | undefined> {
  const text = await zip.readText(name);
  return text === undefined ? undefined : parseXml(skip ? withoutMasters(text) : text, limits, { skip });
}

/**
 * styles.xml without its `office:master-styles` element, cut out of the text before parsing when it is written with
 * the usual prefix (a presentation's masters are most of the file: 231 of 295 KB in Tika's LibreOffice sample,
 * whose read went from 47 to 18 ms); under another prefix the parser skips it instead.
 */
function withoutMasters(text: string): string {
  const from = text.indexOf('<office:master-styles');
  const close = '</office:master-styles>';
  const to = text.indexOf(close, from);
  return from < 0 || to < 0 ? text : text.slice(0, from) + text.slice(to + close.length);
}

/** What styles.xml holds that no reader uses: the master pages (a presentation's are its drawings), the fonts. */
const UNUSED_STYLES = new Set(['office:master-styles', 'office:font-face-decls']);

/**
 * content.xml of an ODF package of `kind` (`text`, `spreadsheet`, `presentation`), with its styles and metadata.
 * An encrypted package (a password set in the office suite: the manifest lists `encryption-data`) is 422
 * `encrypted`; a zip without content.xml is 422 `corrupt`.
 */
export async function openOdf(zip: ZipArchive, limits: ReadLimits, kind: string) {
  const mimetype = (await zip.readText('mimetype'))?.trim();
  if (mimetype && !mimetype.startsWith('application/vnd.oasis.opendocument.'))
    throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', `The file is a zip but not an OpenDocument package.`);
  const manifest = await readXml(zip, 'META-INF/manifest.xml', limits);
  if (manifest && hasLocal(manifest, 'encryption-data'))
    throw new DocumentError('UNPROCESSABLE_INPUT', 'encrypted', 'The OpenDocument file is password-protected.');
  const content = await readXml(zip, 'content.xml', limits);
  const body = path(content, 'office:body', `office:${kind}`);
  if (!content || !body)
    throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', `The package has no OpenDocument ${kind} content.`);
  const styles = await readXml(zip, 'styles.xml', limits, UNUSED_STYLES);
  const meta = await readXml(zip, 'meta.xml', limits);
  return { body, styles: readStyles(styles, content), meta: readMeta(meta) };
}

/** The manifest's namespace has no canonical prefix in xml.ts, so its elements are matched by local name. */
function hasLocal(el: XmlElement, local: string): boolean {
  return elements(el).some((c) => c.name.split(':').pop() === local || hasLocal(c, local));
}

function readMeta(meta: XmlElement | undefined): OdfMeta {
  const m = path(meta, 'office:meta');
  const value = (name: string) => textOf(child(m, name)).trim() || undefined;
  const pages = Number(child(m, 'meta:document-statistic')?.attrs['meta:page-count']);
  return {
    title: value('dc:title'),
    author: value('dc:creator') ?? value('meta:initial-creator'),
    language: value('dc:language'),
    pageCount: Number.isInteger(pages) && pages > 0 ? pages : undefined,
  };
}

/** Text and paragraph styles' emphasis (a parent's inherited), and list styles' numbered levels. */
function readStyles(styles: XmlElement | undefined, content: XmlElement): OdfStyles {
  const containers = [
    path(styles, 'office:styles'),
    path(styles, 'office:automatic-styles'),
    path(content, 'office:automatic-styles'),
  ];
  const raw = new Map<string, { parent?: string; style: RunStyle }>();
  const numberedLevels = new Map<string, Set<number>>();
  const hiddenTables = new Set<string>();
  for (const container of containers)
    for (const el of elements(container)) {
      const name = el.attrs['style:name'];
      if (!name) continue;
      if (el.name === 'style:style') {
        const props = child(el, 'style:text-properties')?.attrs ?? {};
        const style: RunStyle = {};
        // `false` kept (not left out) so a child style's `normal` overrides its parent's bold.
        const weight = props['fo:font-weight'];
        if (weight) style.bold = weight === 'bold' || Number(weight) >= 600;
        const slant = props['fo:font-style'];
        if (slant) style.italic = slant === 'italic' || slant === 'oblique';
        const through = props['style:text-line-through-style'];
        if (through && through !== 'none') style.strike = true;
        raw.set(name, { parent: el.attrs['style:parent-style-name'], style });
        if (child(el, 'style:table-properties')?.attrs['table:display'] === 'false') hiddenTables.add(name);
      } else if (el.name === 'text:list-style') {
        const levels = new Set<number>();
        for (const lvl of elements(el, 'text:list-level-style-number')) levels.add(Number(lvl.attrs['text:level']));
        numberedLevels.set(name, levels);
      }
    }
  const text = new Map<string, RunStyle>();
  const resolve = (name: string, seen: Set<string>): RunStyle => {
    const known = text.get(name);
    if (known) return known;
    const entry = raw.get(name);
    if (!entry || seen.has(name)) return {};
    seen.add(name);
    const resolved = { ...(entry.parent ? resolve(entry.parent, seen) : {}), ...entry.style };
    text.set(name, resolved);
    return resolved;
  };
  for (const name of raw.keys()) resolve(name, new Set());
  return { text, numberedLevels, hiddenTables };
}
