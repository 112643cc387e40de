/**
 * The Open Packaging Conventions parts every OOXML reader needs: relationships (`_rels/*.rels`), the main part named
 * by the package's officeDocument relationship, core properties (`docProps/core.xml`) and the images a part embeds.
 */
import { DocumentError, type DocImage, type ReadLimits } from '../model';
import { child, elements, parseXml, textOf, type XmlElement } from '../xml';
import { resolvePartPath, type ZipArchive } from '../zip';

export interface Relationship {
  id: string;
  /** The relationship type's last path segment: `image`, `hyperlink`, `slide`, `notesSlide`, `officeDocument`... */
  type: string;
  /** A package part path for internal targets, the target as written for external ones (never fetched). */
  target: string;
  external: boolean;
}

export async function readXmlPart(zip: ZipArchive, name: string, limits: ReadLimits): Promise<XmlElement | undefined> {
  const text = await zip.readText(name);
  return text === undefined ? undefined : parseXml(text, limits);
}

/** `word/document.xml` → `word/_rels/document.xml.rels`. */
export function relsPathOf(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/** The relationships of `part` (`''` for the package's own), by id. */
export async function readRels(zip: ZipArchive, part: string, limits: ReadLimits): Promise<Map<string, Relationship>> {
  const rels = new Map<string, Relationship>();
  const root = await readXmlPart(zip, part ? relsPathOf(part) : '_rels/.rels', limits);
  for (const rel of elements(root, 'rel:Relationship')) {
    const external = rel.attrs.TargetMode === 'External';
    const target = rel.attrs.Target ?? '';
    rels.set(rel.attrs.Id ?? '', {
      id: rel.attrs.Id ?? '',
      type: (rel.attrs.Type ?? '').split('/').pop() ?? '',
      target: external ? target : resolvePartPath(part, target),
      external,
    });
  }
  return rels;
}

/** The package's main part (`word/document.xml`...), or 422 `corrupt` when the zip is not such a package. */
export async function mainPart(zip: ZipArchive, limits: ReadLimits, fallback: string, what: string) {
  const rels = await readRels(zip, '', limits);
  const office = [...rels.values()].find((r) => r.type === 'officeDocument' && !r.external);
  const name = office && zip.has(office.target) ? office.target : fallback;
  if (!zip.has(name))
    throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', `The file is a zip but not a ${what} package.`);
  return name;
}

export interface CoreProperties {
  title?: string;
  author?: string;
  language?: string;
  pages?: number;
}

/** `docProps/core.xml` (title, creator, language) and `docProps/app.xml` (the saved page count). */
export async function readCoreProperties(zip: ZipArchive, limits: ReadLimits): Promise<CoreProperties> {
  const core = await readXmlPart(zip, 'docProps/core.xml', limits);
  const app = await readXmlPart(zip, 'docProps/app.xml', limits);
  const value = (el: XmlElement | undefined, name: string) => textOf(child(el, name)).trim() || undefined;
  const pages = Number(value(app, 'ep:Pages'));
  return {
    title: value(core, 'dc:title'),
    author: value(core, 'dc:creator'),
    language: value(core, 'dc:language'),
    pages: Number.isInteger(pages) && pages > 0 ? pages : undefined,
  };
}

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  emf: 'image/emf',
  wmf: 'image/wmf',
};

/**
 * Collects a document's embedded images once each (the same part named twice is one image), under safe unique
 * names (`image-1.png`). Targets outside the package (linked images) are never fetched and give no image.
 */
export class ImageCollector {
  readonly images: DocImage[] = [];
  private readonly byPart = new Map<string, string>();

  constructor(
    private readonly zip: ZipArchive,
    private readonly prefix = 'image',
  ) {}

  /** The image's name in the model, reading it on first use; `undefined` when the part is absent. */
  async add(partPath: string): Promise<string | undefined> {
    const known = this.byPart.get(partPath);
    if (known) return known;
    const data = await this.zip.read(partPath);
    if (!data) return undefined;
    const ext = (partPath.split('.').pop() ?? '').toLowerCase();
    const safeExt = /^[a-z0-9]{1,5}$/.test(ext) ? ext : 'bin';
    const name = `${this.prefix}-${this.images.length + 1}.${safeExt}`;
    this.images.push({ name, mime: MIME_BY_EXT[ext] ?? 'application/octet-stream', data: new Uint8Array(data) });
    this.byPart.set(partPath, name);
    return name;
  }
}

/** OOXML's on/off properties (`<w:b/>`, `<w:b w:val="0"/>`, `<a:rPr b="1">`). */
export function isOn(value: string | undefined): boolean {
  return value === undefined || !['0', 'false', 'off', 'none'].includes(value.toLowerCase());
}
