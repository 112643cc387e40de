/**
 * DOCX (WordprocessingML) to the document model: the body in order, headings from paragraph styles, lists from
 * numbering.xml, tables with their spans, emphasis and links, footnotes, endnotes and comments as notes, images.
 * Tracked deletions (`w:del`, and `w:moveFrom`: a move's old place) are skipped and insertions (`w:ins`, and
 * `w:moveTo`: its new place) kept; fields give their cached results (the runs between `separate` and `end`;
 * instruction text is never shown). Hyperlink targets are recorded, never fetched.
 */
import { DocumentError, type DocBlock, type DocumentReader, type Inline, type TableCell } from '../model';
import { child, descendants, elements, path, textOf, type XmlElement } from '../xml';
import { openZip, type ZipArchive } from '../zip';
import { DocxNumbering, DocxStyles, isMonospace } from './ooxml-docx-styles';
import { InlineBuilder, type RunStyle } from './ooxml-inline';
import {
  ImageCollector,
  isOn,
  mainPart,
  readCoreProperties,
  readRels,
  readXmlPart,
  type Relationship,
} from './ooxml-package';

interface Ctx {
  styles: DocxStyles;
  numbering: DocxNumbering;
  rels: Map<string, Relationship>;
  images: ImageCollector;
  part: string;
  /** Notes referenced so far, in order: their blocks follow the body. */
  notes: DocBlock[];
  footnotes: Map<string, XmlElement>;
  endnotes: Map<string, XmlElement>;
  comments: Map<string, XmlElement>;
  zip: ZipArchive;
}

export const readDocx: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const part = await mainPart(zip, limits, 'word/document.xml', 'Word');
    const doc = await readXmlPart(zip, part, limits);
    const body = path(doc, 'w:body');
    if (!body) throw new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', 'The Word document has no body.');
    const rels = await readRels(zip, part, limits);
    const byType = (type: string) => [...rels.values()].find((r) => r.type === type && !r.external)?.target;
    const load = async (type: string, fallback: string) => readXmlPart(zip, byType(type) ?? fallback, limits);
    const byId = (root: XmlElement | undefined, name: string) =>
      new Map(elements(root, name).map((n) => [n.attrs['w:id'] ?? '', n]));
    const ctx: Ctx = {
      styles: new DocxStyles(await load('styles', 'word/styles.xml')),
      numbering: new DocxNumbering(await load('numbering', 'word/numbering.xml')),
      rels,
      images: new ImageCollector(zip),
      part,
      notes: [],
      footnotes: byId(await load('footnotes', 'word/footnotes.xml'), 'w:footnote'),
      endnotes: byId(await load('endnotes', 'word/endnotes.xml'), 'w:endnote'),
      comments: byId(await load('comments', 'word/comments.xml'), 'w:comment'),
      zip,
    };
    const blocks: DocBlock[] = [];
    await readBlocks(body, ctx, blocks);
    blocks.push(...ctx.notes);
    const props = await readCoreProperties(zip, limits);
    return {
      format: 'docx',
      title: props.title,
      author: props.author,
      language: props.language,
      pageCount: props.pages,
      parts: [{ kind: 'document', blocks }],
      images: ctx.images.images,
    };
  } finally {
    zip.close();
  }
};

/** Block-level content: paragraphs, tables, and the containers that wrap them (content controls, custom XML). */
async function readBlocks(container: XmlElement, ctx: Ctx, out: DocBlock[]): Promise<void> {
  for (const el of elements(container)) {
    if (el.name === 'w:p') await readParagraph(el, ctx, out);
    else if (el.name === 'w:tbl') out.push(await readTable(el, ctx));
    else if (el.name === 'w:sdt') await readBlocks(child(el, 'w:sdtContent') ?? el, ctx, out);
    else if (el.name === 'w:customXml' || el.name === 'w:ins' || el.name === 'w:moveTo' || el.name === 'w:smartTag')
      await readBlocks(el, ctx, out);
  }
}

async function readParagraph(p: XmlElement, ctx: Ctx, out: DocBlock[]): Promise<void> {
  const pPr = child(p, 'w:pPr');
  const styleId = child(pPr, 'w:pStyle')?.attrs['w:val'];
  const inline = new InlineBuilder();
  const after: DocBlock[] = [];
  const state = { inField: false, fieldResult: false };
  await readRuns(p, ctx, inline, {}, after, state, styleId);
  const text = inline.build();
  const plain = inline.text.trim();
  const outline = child(pPr, 'w:outlineLvl')?.attrs['w:val'];
  const level = outline !== undefined && Number(outline) < 9 ? Number(outline) + 1 : ctx.styles.headingLevel(styleId);
  const numPr = child(pPr, 'w:numPr');
  const styleNum = ctx.styles.numbering(styleId);
  const numId = child(numPr, 'w:numId')?.attrs['w:val'] ?? styleNum?.numId;
  const ilvl = Number(child(numPr, 'w:ilvl')?.attrs['w:val'] ?? styleNum?.ilvl ?? 0);
  const item = plain && !level && numId !== undefined ? ctx.numbering.next(numId, ilvl) : undefined;
  if (plain) {
    if (level) out.push({ type: 'heading', level, text });
    else if (item) {
      out.push(
        item.number === undefined
          ? { type: 'list_item', level: item.level, ordered: item.ordered, text }
          : { type: 'list_item', level: item.level, ordered: item.ordered, number: item.number, text },
      );
    } else if (ctx.styles.isCode(styleId) || isAllCode(text)) {
      const code = inline.text.replace(/\s+$/, '');
      const prev = out[out.length - 1];
      if (prev?.type === 'code') prev.text += `\n${code}`;
      else out.push({ type: 'code', text: code });
    } else if (/^(quote|intense quote|block text)$/i.test(styleId ?? '')) out.push({ type: 'quote', text });
    else out.push({ type: 'paragraph', text });
  }
  out.push(...after);
}

const isAllCode = (text: Inline) => typeof text !== 'string' && text.length > 0 && text.every((r) => r.code);

interface FieldState {
  inField: boolean;
  fieldResult: boolean;
}

/** Runs and the inline containers around them (hyperlinks, insertions, smart tags, simple fields). */
async function readRuns(
  el: XmlElement,
  ctx: Ctx,
  inline: InlineBuilder,
  style: RunStyle,
  after: DocBlock[],
  field: FieldState,
  paraStyle: string | undefined,
): Promise<void> {
  for (const c of elements(el)) {
    switch (c.name) {
      case 'w:r':
        await readRun(c, ctx, inline, style, after, field, paraStyle);
        break;
      case 'w:hyperlink': {
        const rel = c.attrs['r:id'] ? ctx.rels.get(c.attrs['r:id']) : undefined;
        const href = rel?.external ? rel.target : c.attrs['w:anchor'] ? `#${c.attrs['w:anchor']}` : undefined;
        await readRuns(c, ctx, inline, href ? { ...style, href } : style, after, field, paraStyle);
        break;
      }
      case 'w:ins':
      // A tracked move: the text at its new place (w:moveTo) is kept, at its old place (w:moveFrom) skipped.
      case 'w:moveTo':
      case 'w:smartTag':
      case 'w:customXml':
      case 'w:fldSimple':
      case 'w:dir':
      case 'w:bdo':
        await readRuns(c, ctx, inline, style, after, field, paraStyle);
        break;
      case 'w:sdt':
        await readRuns(child(c, 'w:sdtContent') ?? c, ctx, inline, style, after, field, paraStyle);
        break;
      // w:del (tracked deletion), w:moveFrom, w:pPr, bookmarks, proofing marks: nothing to show.
    }
  }
}

async function readRun(
  r: XmlElement,
  ctx: Ctx,
  inline: InlineBuilder,
  outer: RunStyle,
  after: DocBlock[],
  field: FieldState,
  paraStyle: string | undefined,
): Promise<void> {
  const rPr = child(r, 'w:rPr');
  const on = (name: string) => {
    const e = child(rPr, name);
    return e ? isOn(e.attrs['w:val']) : undefined;
  };
  const runStyle = child(rPr, 'w:rStyle')?.attrs['w:val'];
  const font = path(rPr, 'w:rFonts')?.attrs['w:ascii'];
  const style: RunStyle = { ...outer };
  if (on('w:b')) style.bold = true;
  if (on('w:i')) style.italic = true;
  if (on('w:strike') || on('w:dstrike')) style.strike = true;
  if (isMonospace(font) || ctx.styles.isMonospaceRunStyle(runStyle) || ctx.styles.isCode(paraStyle)) style.code = true;
  for (const c of elements(r)) {
    switch (c.name) {
      case 'w:fldChar': {
        const kind = c.attrs['w:fldCharType'];
        if (kind === 'begin') field.inField = true;
        else if (kind === 'separate') field.fieldResult = true;
        else if (kind === 'end') field.inField = field.fieldResult = false;
        break;
      }
      case 'w:t':
        // Between a field's begin and separate there is only its instruction; its text is the cached result after.
        if (!field.inField || field.fieldResult) inline.add(textOf(c), style);
        break;
      case 'w:tab':
        inline.add('\t', style);
        break;
      case 'w:br':
      case 'w:cr':
        inline.add('\n', style);
        break;
      case 'w:noBreakHyphen':
        inline.add('-', style);
        break;
      case 'w:footnoteReference':
      case 'w:endnoteReference': {
        const foot = c.name === 'w:footnoteReference';
        const note = (foot ? ctx.footnotes : ctx.endnotes).get(c.attrs['w:id'] ?? '');
        if (note) await pushNote(note, foot ? 'footnote' : 'endnote', ctx);
        break;
      }
      case 'w:commentReference': {
        const comment = ctx.comments.get(c.attrs['w:id'] ?? '');
        if (comment) await pushNote(comment, 'comment', ctx, comment.attrs['w:author']);
        break;
      }
      case 'w:drawing':
      case 'w:pict':
      case 'mc:AlternateContent':
        await readDrawing(c, ctx, after);
        break;
    }
  }
}

/** A note's paragraphs as one note block, labelled by its place among the notes of its kind. */
async function pushNote(note: XmlElement, kind: 'footnote' | 'endnote' | 'comment', ctx: Ctx, author?: string) {
  const label = String(ctx.notes.filter((n) => n.type === 'note' && n.kind === kind).length + 1);
  const inner: DocBlock[] = [];
  await readBlocks(note, { ...ctx, notes: [] }, inner);
  const text = inner
    .map((b) => ('text' in b && typeof b.text === 'string' ? b.text : 'text' in b ? textOfInline(b.text) : ''))
    .filter(Boolean)
    .join('\n');
  ctx.notes.push(author ? { type: 'note', kind, label, author, text } : { type: 'note', kind, label, text });
}

const textOfInline = (t: Inline | string) => (typeof t === 'string' ? t : t.map((r) => r.text).join(''));

/** Pictures (DrawingML blips, VML image data) and text boxes' paragraphs, as blocks after the paragraph. */
async function readDrawing(el: XmlElement, ctx: Ctx, after: DocBlock[]): Promise<void> {
  // Markup compatibility: the first choice only, so a shape and its VML fallback are not read twice.
  const scope = el.name === 'mc:AlternateContent' ? (child(el, 'mc:Choice') ?? child(el, 'mc:Fallback')) : el;
  if (!scope) return;
  const alt = descendants(scope, 'wp:docPr')[0]?.attrs.descr;
  const ids = [
    ...descendants(scope, 'a:blip').map((b) => b.attrs['r:embed']),
    ...descendants(scope, 'v:imagedata').map((b) => b.attrs['r:id']),
  ];
  for (const id of ids) {
    const rel = id ? ctx.rels.get(id) : undefined;
    if (!rel || rel.external) continue;
    const name = await ctx.images.add(rel.target);
    if (name) after.push(alt ? { type: 'image', name, alt } : { type: 'image', name });
  }
  for (const box of descendants(scope, 'w:txbxContent')) await readBlocks(box, ctx, after);
}

/** A table, its spans computed: `w:gridSpan` is a colspan, a `w:vMerge` run (restart, then continues) a rowspan. */
async function readTable(tbl: XmlElement, ctx: Ctx): Promise<DocBlock> {
  const rows: TableCell[][] = [];
  /** The cell that starts at each grid column in the rows so far, for vertical merges to extend. */
  const openAt = new Map<number, TableCell>();
  let headerRows = 0;
  let inHeader = true;
  for (const tr of elements(tbl, 'w:tr')) {
    const isHeader = !!path(tr, 'w:trPr', 'w:tblHeader') && isOn(path(tr, 'w:trPr', 'w:tblHeader')?.attrs['w:val']);
    if (inHeader && isHeader) headerRows++;
    else inHeader = false;
    const row: TableCell[] = [];
    let col = Number(path(tr, 'w:trPr', 'w:gridBefore')?.attrs['w:val'] ?? 0);
    for (const tc of cellsOf(tr)) {
      const tcPr = child(tc, 'w:tcPr');
      const span = Math.max(1, Number(child(tcPr, 'w:gridSpan')?.attrs['w:val'] ?? 1) || 1);
      const vMerge = child(tcPr, 'w:vMerge');
      const continues = vMerge && (vMerge.attrs['w:val'] ?? 'continue') === 'continue';
      const above = openAt.get(col);
      if (continues && above) {
        above.rowspan = (above.rowspan ?? 1) + 1;
      } else {
        const inner: DocBlock[] = [];
        await readBlocks(tc, ctx, inner);
        const cell: TableCell = { text: cellText(inner) };
        if (span > 1) cell.colspan = span;
        if (isHeader) cell.header = true;
        row.push(cell);
        for (let c = col; c < col + span; c++) openAt.delete(c);
        if (vMerge) openAt.set(col, cell);
      }
      col += span;
    }
    rows.push(row);
  }
  return headerRows ? { type: 'table', rows, headerRows } : { type: 'table', rows };
}

/** A row's cells, content controls around cells unwrapped. */
function cellsOf(tr: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of elements(tr)) {
    if (c.name === 'w:tc') out.push(c);
    else if (c.name === 'w:sdt' || c.name === 'w:customXml') out.push(...cellsOf(child(c, 'w:sdtContent') ?? c));
  }
  return out;
}

/** A cell's blocks as one Inline: one paragraph keeps its runs, several are joined by line breaks. */
function cellText(blocks: DocBlock[]): Inline {
  const texts = blocks.filter((b) => 'text' in b && b.type !== 'note') as Array<{ text: Inline | string }>;
  if (texts.length === 1) return texts[0].text;
  return texts.map((b) => textOfInline(b.text)).join('\n');
}
