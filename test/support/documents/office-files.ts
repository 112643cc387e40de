/**
 * Office files, OpenDocument files and e-books built by the tests from XML they write (yazl), so the structure a
 * reader should find is known exactly. Each builder takes the parts that vary and supplies the package boilerplate.
 */
import yazl from 'yazl';
import { deflateSync } from 'node:zlib';
import { grayPng } from './png';

export type ZipEntries = Record<string, string | Buffer>;

/** A zip of `entries` in the given order; `stored` names entries kept uncompressed (ODF's and EPUB's mimetype). */
export function zipOf(entries: ZipEntries, stored: string[] = []): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries))
    zip.addBuffer(typeof data === 'string' ? Buffer.from(data, 'utf8') : data, name, {
      compress: !stored.includes(name),
    });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** A 2×2 grey PNG: a real image for the image parts. */
export const tinyPng = () => grayPng(2, 2, 8, deflateSync(Buffer.from([0, 10, 20, 0, 30, 40])));

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const REL_TYPE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
export const W_NS =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ' +
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
  'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"';

export interface Rel {
  id: string;
  type: string;
  target: string;
  external?: boolean;
}

export function relsXml(rels: Rel[]): string {
  return (
    `${XML}<Relationships xmlns="${REL_NS}">` +
    rels
      .map(
        (r) =>
          `<Relationship Id="${r.id}" Type="${REL_TYPE}/${r.type}" Target="${r.target}"` +
          `${r.external ? ' TargetMode="External"' : ''}/>`,
      )
      .join('') +
    '</Relationships>'
  );
}

export function coreXml(p: { title?: string; creator?: string; language?: string }): string {
  return (
    `${XML}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
    'xmlns:dc="http://purl.org/dc/elements/1.1/">' +
    (p.title ? `<dc:title>${p.title}</dc:title>` : '') +
    (p.creator ? `<dc:creator>${p.creator}</dc:creator>` : '') +
    (p.language ? `<dc:language>${p.language}</dc:language>` : '') +
    '</cp:coreProperties>'
  );
}

export const appXml = (pages: number) =>
  `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">` +
  `<Pages>${pages}</Pages></Properties>`;

const contentTypes = (main: string, mainType: string) =>
  `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
  `<Override PartName="/${main}" ContentType="${mainType}"/></Types>`;

export interface DocxParts {
  /** The inside of `<w:body>`. */
  body: string;
  styles?: string;
  numbering?: string;
  footnotes?: string;
  comments?: string;
  /** The document part's relationships besides styles, numbering, footnotes and comments. */
  rels?: Rel[];
  media?: Record<string, Buffer>;
  core?: { title?: string; creator?: string; language?: string };
  pages?: number;
}

/** A DOCX package around `parts.body` (word/document.xml), with the optional parts wired by relationships. */
export function buildDocx(parts: DocxParts): Promise<Buffer> {
  const rels: Rel[] = [...(parts.rels ?? [])];
  const entries: ZipEntries = {
    '[Content_Types].xml': contentTypes(
      'word/document.xml',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
    ),
    '_rels/.rels': relsXml([
      { id: 'rId1', type: 'officeDocument', target: 'word/document.xml' },
      { id: 'rId2', type: 'metadata/core-properties', target: 'docProps/core.xml' },
      { id: 'rId3', type: 'extended-properties', target: 'docProps/app.xml' },
    ]),
    'word/document.xml': `${XML}<w:document ${W_NS}><w:body>${parts.body}</w:body></w:document>`,
  };
  const optional: Array<[keyof DocxParts, string, string, string]> = [
    ['styles', 'styles', 'styles.xml', 'w:styles'],
    ['numbering', 'numbering', 'numbering.xml', 'w:numbering'],
    ['footnotes', 'footnotes', 'footnotes.xml', 'w:footnotes'],
    ['comments', 'comments', 'comments.xml', 'w:comments'],
  ];
  for (const [key, type, file, root] of optional) {
    const inner = parts[key];
    if (typeof inner !== 'string') continue;
    entries[`word/${file}`] = `${XML}<${root} ${W_NS}>${inner}</${root}>`;
    rels.push({ id: `rIdX${type}`, type, target: file });
  }
  entries['word/_rels/document.xml.rels'] = relsXml(rels);
  for (const [name, data] of Object.entries(parts.media ?? {})) entries[`word/media/${name}`] = data;
  if (parts.core) entries['docProps/core.xml'] = coreXml(parts.core);
  if (parts.pages) entries['docProps/app.xml'] = appXml(parts.pages);
  return zipOf(entries);
}

/** A paragraph with a style and plain text. */
export const wp = (text: string, style?: string, extraPPr = '') =>
  `<w:p><w:pPr>${style ? `<w:pStyle w:val="${style}"/>` : ''}${extraPPr}</w:pPr>` +
  `<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/** A list paragraph of numbering instance `numId` at level `ilvl`. */
export const wli = (text: string, numId: number, ilvl: number) =>
  wp(text, 'ListParagraph', `<w:numPr><w:ilvl w:val="${ilvl}"/><w:numId w:val="${numId}"/></w:numPr>`);

/** A table cell: `props` goes into w:tcPr (`<w:gridSpan w:val="2"/>`, `<w:vMerge w:val="restart"/>`). */
export const wtc = (text: string, props = '') => `<w:tc><w:tcPr>${props}</w:tcPr>${wp(text)}</w:tc>`;

/** An inline picture of relationship `rId` with a description. */
export const wpic = (rId: string, descr: string) =>
  '<w:r><w:drawing><wp:inline><wp:extent cx="100" cy="100"/>' +
  `<wp:docPr id="1" name="Picture 1" descr="${descr}"/><a:graphic><a:graphicData>` +
  `<pic:pic><pic:blipFill><a:blip r:embed="${rId}"/></pic:blipFill></pic:pic>` +
  '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>';
