/**
 * XML of office files and e-books as a small element tree, parsed with saxes (a well-formedness-checking parser that
 * never reads a DTD, so it expands no declared entity and resolves no external one: there is no resolver to give it).
 *
 * Budgets: the nesting depth (`limits.maxXmlDepth`, 422 `too_deep`) and any DOCTYPE that declares entities (422
 * `xml_entities`, the billion-laughs shape) are refused while parsing. Names are given with a canonical prefix per
 * namespace (`w:p` whatever prefix the file chose, strict OOXML's namespaces included), so readers match on names.
 */
import { SaxesParser } from 'saxes';
import { DocumentError, type ReadLimits } from './model';

export interface XmlElement {
  /** `prefix:local` with the canonical prefix of its namespace (see `PREFIXES`), or the local name alone. */
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

/** Canonical prefixes of the namespaces the readers look at; any other namespace keeps the file's own prefix. */
const PREFIXES: Record<string, string> = {
  'http://schemas.openxmlformats.org/wordprocessingml/2006/main': 'w',
  'http://purl.oclc.org/ooxml/wordprocessingml/main': 'w',
  'http://schemas.openxmlformats.org/drawingml/2006/main': 'a',
  'http://purl.oclc.org/ooxml/drawingml/main': 'a',
  'http://schemas.openxmlformats.org/presentationml/2006/main': 'p',
  'http://purl.oclc.org/ooxml/presentationml/main': 'p',
  'http://schemas.openxmlformats.org/spreadsheetml/2006/main': 's',
  'http://purl.oclc.org/ooxml/spreadsheetml/main': 's',
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships': 'r',
  'http://purl.oclc.org/ooxml/officeDocument/relationships': 'r',
  'http://schemas.openxmlformats.org/package/2006/relationships': 'rel',
  'http://schemas.openxmlformats.org/package/2006/metadata/core-properties': 'cp',
  'http://schemas.openxmlformats.org/officeDocument/2006/extended-properties': 'ep',
  'http://purl.oclc.org/ooxml/officeDocument/extendedProperties': 'ep',
  'http://purl.org/dc/elements/1.1/': 'dc',
  'http://purl.org/dc/terms/': 'dcterms',
  'http://schemas.openxmlformats.org/drawingml/2006/picture': 'pic',
  'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing': 'wp',
  'urn:schemas-microsoft-com:vml': 'v',
  'http://schemas.openxmlformats.org/markup-compatibility/2006': 'mc',
  'urn:oasis:names:tc:opendocument:xmlns:office:1.0': 'office',
  'urn:oasis:names:tc:opendocument:xmlns:text:1.0': 'text',
  'urn:oasis:names:tc:opendocument:xmlns:table:1.0': 'table',
  'urn:oasis:names:tc:opendocument:xmlns:drawing:1.0': 'draw',
  'urn:oasis:names:tc:opendocument:xmlns:presentation:1.0': 'presentation',
  'urn:oasis:names:tc:opendocument:xmlns:style:1.0': 'style',
  'urn:oasis:names:tc:opendocument:xmlns:meta:1.0': 'meta',
  'urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0': 'fo',
  'http://www.w3.org/1999/xlink': 'xlink',
  'urn:oasis:names:tc:opendocument:xmlns:container': 'container',
  'http://www.idpf.org/2007/opf': 'opf',
  'http://www.daisy.org/z3986/2005/ncx/': 'ncx',
  'http://www.w3.org/1999/xhtml': 'h',
  'http://www.idpf.org/2007/ops': 'epub',
  'http://www.w3.org/2001/04/xmlenc#': 'enc',
  'http://www.w3.org/XML/1998/namespace': 'xml',
};

/** Named character references XHTML chapters use without declaring them (EPUB 2 points at the XHTML 1.1 DTD). */
const HTML_ENTITIES: Record<string, string> = {
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  shy: '\u00ad',
  deg: '°',
  times: '×',
  eacute: 'é',
  egrave: 'è',
  agrave: 'à',
  aacute: 'á',
  ccedil: 'ç',
  ouml: 'ö',
  uuml: 'ü',
  auml: 'ä',
  szlig: 'ß',
  euro: '€',
  pound: '£',
  sect: '§',
  para: '¶',
  thinsp: '\u2009',
  ensp: '\u2002',
  emsp: '\u2003',
  zwnj: '\u200c',
};

export interface ParseXmlOptions {
  /** Accept HTML's named character references (XHTML of EPUB chapters). */
  htmlEntities?: boolean;
  /**
   * Elements whose subtrees are not built (still parsed, and counted against the depth bound): a presentation's
   * master pages in styles.xml, hundreds of KB of drawings no reader uses.
   */
  skip?: ReadonlySet<string>;
}

/** Parses `text` into its root element, within `limits.maxXmlDepth`. Malformed XML is 422 `corrupt`. */
export function parseXml(text: string, limits: ReadLimits, options: ParseXmlOptions = {}): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: false });
  if (options.htmlEntities) Object.assign(parser.ENTITIES, HTML_ENTITIES);
  const root: XmlElement = { name: '#document', attrs: {}, children: [] };
  const stack: XmlElement[] = [root];
  /** How deep inside a skipped element the parser is (0: building). */
  let skipped = 0;
  let refusal: DocumentError | undefined;
  parser.on('doctype', (doctype) => {
    if (/<!ENTITY/i.test(doctype))
      throw (refusal = new DocumentError(
        'UNPROCESSABLE_INPUT',
        'xml_entities',
        'The XML declares entities in its DOCTYPE; entity expansion is refused.',
      ));
  });
  parser.on('opentag', (tag) => {
    // Thrown from the handler so saxes stops at once (a deeper stack also makes its namespace lookups slower).
    if (stack.length + skipped > limits.maxXmlDepth)
      throw (refusal = new DocumentError(
        'UNPROCESSABLE_INPUT',
        'too_deep',
        `The XML nests elements more than ${limits.maxXmlDepth} levels deep.`,
      ));
    if (skipped || options.skip?.has(canonical(tag.uri, tag.prefix, tag.local))) {
      skipped++;
      return;
    }
    const attrs: Record<string, string> = {};
    for (const attr of Object.values(tag.attributes)) {
      if (attr.prefix === 'xmlns' || attr.name === 'xmlns') continue;
      attrs[canonical(attr.uri, attr.prefix, attr.local)] = attr.value;
    }
    const el: XmlElement = { name: canonical(tag.uri, tag.prefix, tag.local), attrs, children: [] };
    stack[stack.length - 1].children.push(el);
    stack.push(el);
  });
  parser.on('closetag', () => {
    if (skipped) skipped--;
    else stack.pop();
  });
  const addText = (t: string) => {
    if (stack.length > 1 && !skipped) stack[stack.length - 1].children.push(t);
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  try {
    parser.write(text);
    parser.close();
  } catch (err) {
    if (refusal) throw refusal;
    throw new DocumentError(
      'UNPROCESSABLE_INPUT',
      'corrupt',
      `Malformed XML: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const top = root.children.find((c): c is XmlElement => typeof c !== 'string');
  if (!top) throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', 'The XML has no root element.');
  return top;
}

function canonical(uri: string | undefined, prefix: string, local: string): string {
  if (!uri) return prefix ? `${prefix}:${local}` : local;
  const p = PREFIXES[uri] ?? prefix;
  return p ? `${p}:${local}` : local;
}

/** Element children of `el`, optionally only those named `name`. */
export function elements(el: XmlElement | undefined, name?: string): XmlElement[] {
  if (!el) return [];
  const out: XmlElement[] = [];
  for (const c of el.children) if (typeof c !== 'string' && (name === undefined || c.name === name)) out.push(c);
  return out;
}

/** The first child element named `name`. */
export function child(el: XmlElement | undefined, name: string): XmlElement | undefined {
  if (!el) return undefined;
  for (const c of el.children) if (typeof c !== 'string' && c.name === name) return c;
  return undefined;
}

/** Follows a path of child names (`child(child(el, a), b)`...). */
export function path(el: XmlElement | undefined, ...names: string[]): XmlElement | undefined {
  let cur = el;
  for (const n of names) cur = child(cur, n);
  return cur;
}

/** Every descendant named `name`, in document order (not below a match). */
export function descendants(el: XmlElement | undefined, name: string, out: XmlElement[] = []): XmlElement[] {
  if (!el) return out;
  for (const c of el.children) {
    if (typeof c === 'string') continue;
    if (c.name === name) out.push(c);
    else descendants(c, name, out);
  }
  return out;
}

/** All text below `el`, concatenated. */
export function textOf(el: XmlNode | undefined): string {
  if (el === undefined) return '';
  if (typeof el === 'string') return el;
  let s = '';
  for (const c of el.children) s += textOf(c);
  return s;
}
