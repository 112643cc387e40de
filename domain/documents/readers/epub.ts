/**
 * EPUB (2 and 3) to the document model: `META-INF/container.xml` names the package document (OPF), whose manifest
 * lists the files and whose spine gives the reading order; each XHTML file of the spine is a `chapter` part, named by
 * the table of contents (the EPUB 3 nav document, else the EPUB 2 NCX) or else by its first heading. Title, creator
 * and language come from the OPF's Dublin Core metadata. A book whose content files `META-INF/encryption.xml` lists
 * (DRM) is 422 `encrypted`; obfuscated fonts alone do not stop the reading (we never read fonts).
 */
import { DocumentError, type DocBlock, type DocPart, type DocumentReader, type ReadLimits } from '../model';
import { child, descendants, elements, parseXml, path, textOf, type XmlElement } from '../xml';
import { openZip, resolvePartPath, type ZipArchive } from '../zip';
import { readClassEmphasis, type ClassEmphasis } from './epub-css';
import { firstHeading, XhtmlWalker, type ImageResolver } from './epub-xhtml';
import { readHtml } from './html';
import { ImageCollector } from './ooxml-package';

interface ManifestItem {
  id: string;
  /** The file's path in the package (resolved against the OPF's folder). */
  path: string;
  mediaType: string;
  properties: string[];
}

const corrupt = (message: string) => new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', message);
const XHTML_TYPES = new Set(['application/xhtml+xml', 'text/html', 'application/xml', 'text/xml']);
const isFont = (mediaType: string) => /^(font\/|application\/(x-)?font|application\/vnd\.ms-opentype)/i.test(mediaType);

async function readXml(zip: ZipArchive, name: string, limits: ReadLimits, xhtml = false) {
  const text = await zip.readText(name);
  return text === undefined ? undefined : parseXml(text, limits, { htmlEntities: xhtml });
}

export const readEpub: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const container = await readXml(zip, 'META-INF/container.xml', limits);
    const opfPath = elements(path(container, 'container:rootfiles'), 'container:rootfile')
      .map((r) => r.attrs['full-path'])
      .find((p) => p && zip.has(p));
    if (!opfPath) throw corrupt('The EPUB has no package document (META-INF/container.xml names none that exists).');
    const opf = await readXml(zip, opfPath, limits);
    if (!opf || opf.name !== 'opf:package') throw corrupt(`${opfPath} is not an EPUB package document.`);
    const manifest = readManifest(opf, opfPath);
    await refuseEncrypted(zip, limits, manifest);

    const titles = await tocTitles(zip, limits, opf, manifest);
    // Style sheets of the whole book, merged: only class emphasis is taken from them (epub-css.ts).
    const classes = new Map<string, ClassEmphasis>();
    for (const item of manifest.values())
      if (item.mediaType.toLowerCase() === 'text/css')
        readClassEmphasis((await zip.readText(item.path)) ?? '', classes);
    const images = new ImageCollector(zip);
    const parts: DocPart[] = [];
    const seen = new Set<string>();
    for (const ref of elements(child(opf, 'opf:spine'), 'opf:itemref')) {
      const item = manifest.get(ref.attrs.idref ?? '');
      // A spine naming the same file twice reads it once; non-XHTML spine items (rare, with fallbacks) are skipped.
      if (!item || seen.has(item.path) || !XHTML_TYPES.has(item.mediaType.toLowerCase())) continue;
      seen.add(item.path);
      const blocks = await chapterBlocks(zip, item.path, limits, (p) => images.add(p), classes);
      if (!blocks) continue;
      const name = titles.get(item.path) ?? firstHeading(blocks);
      parts.push({ kind: 'chapter', ...(name ? { name } : {}), blocks });
    }
    const metadata = child(opf, 'opf:metadata');
    const meta = (name: string) => textOf(child(metadata, name)).replace(/\s+/g, ' ').trim() || undefined;
    const title = meta('dc:title');
    const author = meta('dc:creator');
    const language = meta('dc:language');
    return {
      format: 'epub',
      ...(title ? { title } : {}),
      ...(author ? { author } : {}),
      ...(language ? { language } : {}),
      parts,
      images: images.images,
    };
  } finally {
    zip.close();
  }
};

/**
 * A chapter's blocks. Books in the wild carry chapters that are not well-formed XML (HTML's `<br>`, a named entity
 * XHTML lacks): such a chapter is read as HTML (readers/html.ts, cheerio), keeping its text but not its package
 * images, rather than losing the book. Entity declarations and excessive depth are still refused, never retried.
 */
async function chapterBlocks(
  zip: ZipArchive,
  part: string,
  limits: ReadLimits,
  addImage: ImageResolver,
  classes: Map<string, ClassEmphasis>,
): Promise<DocBlock[] | undefined> {
  const text = await zip.readText(part);
  if (text === undefined) return undefined;
  let xhtml: XmlElement;
  try {
    xhtml = parseXml(text, limits, { htmlEntities: true });
  } catch (err) {
    if (!(err instanceof DocumentError) || err.reason !== 'corrupt') throw err;
    const html = await readHtml(Buffer.from(text, 'utf8'), limits);
    return html.parts.flatMap((p) => p.blocks).filter((b) => b.type !== 'image');
  }
  const walker = new XhtmlWalker(part, addImage, classes);
  await walker.walk(child(xhtml, 'h:body')?.children ?? child(xhtml, 'body')?.children ?? []);
  return walker.blocks;
}

function readManifest(opf: XmlElement, opfPath: string): Map<string, ManifestItem> {
  const items = new Map<string, ManifestItem>();
  for (const item of elements(child(opf, 'opf:manifest'), 'opf:item')) {
    const href = item.attrs.href;
    // A remote resource (EPUB 3 allows some) is never fetched: it is no file of ours.
    if (!item.attrs.id || !href || /^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    items.set(item.attrs.id, {
      id: item.attrs.id,
      path: resolvePartPath(opfPath, href),
      mediaType: item.attrs['media-type'] ?? '',
      properties: (item.attrs.properties ?? '').split(/\s+/).filter(Boolean),
    });
  }
  return items;
}

/**
 * `META-INF/encryption.xml` lists the encrypted files by URI (relative to the container's root). Font obfuscation
 * (IDPF, Adobe) lists fonts only, which we never read; any other listed file means the content is locked.
 */
async function refuseEncrypted(zip: ZipArchive, limits: ReadLimits, manifest: Map<string, ManifestItem>) {
  const encryption = await readXml(zip, 'META-INF/encryption.xml', limits);
  if (!encryption) return;
  const fonts = new Set([...manifest.values()].filter((i) => isFont(i.mediaType)).map((i) => i.path));
  for (const ref of descendants(encryption, 'enc:CipherReference')) {
    const uri = resolvePartPath('', ref.attrs.URI ?? '');
    if (uri && !fonts.has(uri) && !/\.(otf|ttf|woff2?)$/i.test(uri))
      throw new DocumentError(
        'UNPROCESSABLE_INPUT',
        'encrypted',
        `The EPUB's content is encrypted (DRM): META-INF/encryption.xml lists ${uri}.`,
      );
  }
}

/** Chapter titles by file path: the first table-of-contents entry pointing into each file. */
async function tocTitles(zip: ZipArchive, limits: ReadLimits, opf: XmlElement, manifest: Map<string, ManifestItem>) {
  const titles = new Map<string, string>();
  const add = (from: string, href: string | undefined, label: string) => {
    const text = label.replace(/\s+/g, ' ').trim();
    if (!href || !text || /^[a-z][a-z0-9+.-]*:/i.test(href)) return;
    const target = resolvePartPath(from, href);
    if (!titles.has(target)) titles.set(target, text);
  };
  const nav = [...manifest.values()].find((i) => i.properties.includes('nav'));
  const navXml = nav ? await readXml(zip, nav.path, limits, true) : undefined;
  const tocNav =
    descendants(navXml, 'h:nav').find((n) => /\btoc\b/.test(n.attrs['epub:type'] ?? '')) ??
    descendants(navXml, 'h:nav')[0];
  if (nav && tocNav) for (const a of descendants(tocNav, 'h:a')) add(nav.path, a.attrs.href, textOf(a));
  if (titles.size) return titles;
  // EPUB 2: the spine's `toc` names the NCX; its navPoints nest, in reading order.
  const ncx =
    manifest.get(child(opf, 'opf:spine')?.attrs.toc ?? '') ??
    [...manifest.values()].find((i) => i.mediaType === 'application/x-dtbncx+xml');
  const ncxXml = ncx ? await readXml(zip, ncx.path, limits) : undefined;
  const walk = (el: XmlElement | undefined) => {
    for (const point of elements(el, 'ncx:navPoint')) {
      if (ncx) add(ncx.path, child(point, 'ncx:content')?.attrs.src, textOf(path(point, 'ncx:navLabel', 'ncx:text')));
      walk(point);
    }
  };
  walk(child(ncxXml, 'ncx:navMap'));
  return titles;
}
