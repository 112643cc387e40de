/**
 * PPTX (PresentationML) to the document model: slides in the presentation's order (`sldIdLst`, not file names), each
 * a `slide` part named by its title placeholder; body text as list items by `a:lvl` (paragraphs where bullets are
 * off), text boxes as paragraphs, tables with their spans, pictures, and the notes slide as a `speaker_notes` note.
 * A hidden slide (`show="0"`) is kept, in its place, and says it is hidden.
 */
import { type DocBlock, type DocumentReader, type TableCell } from '../model';
import { child, descendants, elements, path, textOf, type XmlElement } from '../xml';
import { openZip } from '../zip';
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

type Rels = Map<string, Relationship>;

export const readPptx: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const part = await mainPart(zip, limits, 'ppt/presentation.xml', 'PowerPoint');
    const presentation = await readXmlPart(zip, part, limits);
    const rels = await readRels(zip, part, limits);
    const images = new ImageCollector(zip);
    const parts = [];
    for (const id of elements(path(presentation, 'p:sldIdLst'), 'p:sldId')) {
      const rel = rels.get(id.attrs['r:id'] ?? '');
      if (!rel || rel.external) continue;
      const slide = await readXmlPart(zip, rel.target, limits);
      if (!slide) continue;
      const slideRels = await readRels(zip, rel.target, limits);
      const blocks: DocBlock[] = [];
      if (slide.attrs.show === '0')
        blocks.push({ type: 'paragraph', text: 'This slide is hidden in the presentation.' });
      const title = { text: '' };
      await readShapes(path(slide, 'p:cSld', 'p:spTree'), slideRels, images, blocks, title);
      const notesRel = [...slideRels.values()].find((r) => r.type === 'notesSlide' && !r.external);
      const notes = notesRel ? await readXmlPart(zip, notesRel.target, limits) : undefined;
      const notesText = notes ? notesOf(notes) : '';
      if (notesText) blocks.push({ type: 'note', kind: 'speaker_notes', text: notesText });
      parts.push(
        title.text ? { kind: 'slide' as const, name: title.text, blocks } : { kind: 'slide' as const, blocks },
      );
    }
    const props = await readCoreProperties(zip, limits);
    return {
      format: 'pptx',
      title: props.title,
      author: props.author,
      language: props.language,
      parts,
      images: images.images,
    };
  } finally {
    zip.close();
  }
};

/** The placeholder type of a shape (`title`, `ctrTitle`, `body`, `subTitle`...), `''` for a placeholder without one. */
function placeholder(sp: XmlElement): string | undefined {
  const ph = descendants(child(sp, 'p:nvSpPr') ?? child(sp, 'p:nvGraphicFramePr'), 'p:ph')[0];
  return ph ? (ph.attrs.type ?? '') : undefined;
}

async function readShapes(
  tree: XmlElement | undefined,
  rels: Rels,
  images: ImageCollector,
  out: DocBlock[],
  title: { text: string },
): Promise<void> {
  for (const el of elements(tree)) {
    if (el.name === 'p:sp') {
      const ph = placeholder(el);
      const body = child(el, 'p:txBody');
      if (!body) continue;
      if ((ph === 'title' || ph === 'ctrTitle') && !title.text) {
        const inline = new InlineBuilder();
        elements(body, 'a:p').forEach((p, i) => {
          if (i) inline.add(' ');
          readRuns(p, rels, inline);
        });
        title.text = inline.text.trim();
        if (title.text) out.unshift({ type: 'heading', level: 1, text: inline.build() });
        continue;
      }
      // Body placeholders are bulleted by the master unless a paragraph turns bullets off.
      const bulleted = ph === '' || ph === 'body' || ph === 'obj';
      for (const p of elements(body, 'a:p')) out.push(...paragraph(p, rels, bulleted));
    } else if (el.name === 'p:graphicFrame') {
      const tbl = descendants(el, 'a:tbl')[0];
      if (tbl) out.push(table(tbl, rels));
    } else if (el.name === 'p:pic') {
      const id = descendants(el, 'a:blip')[0]?.attrs['r:embed'];
      const rel = id ? rels.get(id) : undefined;
      const name = rel && !rel.external ? await images.add(rel.target) : undefined;
      const alt = descendants(el, 'p:cNvPr')[0]?.attrs.descr;
      if (name) out.push(alt ? { type: 'image', name, alt } : { type: 'image', name });
    } else if (el.name === 'p:grpSp') {
      await readShapes(el, rels, images, out, title);
    } else if (el.name === 'mc:AlternateContent') {
      await readShapes(child(el, 'mc:Choice') ?? child(el, 'mc:Fallback'), rels, images, out, title);
    }
  }
}

function paragraph(p: XmlElement, rels: Rels, bulleted: boolean): DocBlock[] {
  const inline = new InlineBuilder();
  readRuns(p, rels, inline);
  if (!inline.text.trim()) return [];
  const pPr = child(p, 'a:pPr');
  const level = Number(pPr?.attrs.lvl ?? 0);
  const text = inline.build();
  if (child(pPr, 'a:buAutoNum')) {
    const start = Number(child(pPr, 'a:buAutoNum')?.attrs.startAt ?? NaN);
    return [
      Number.isFinite(start)
        ? { type: 'list_item', level, ordered: true, number: start, text }
        : { type: 'list_item', level, ordered: true, text },
    ];
  }
  if (child(pPr, 'a:buNone')) return [{ type: 'paragraph', text }];
  if (child(pPr, 'a:buChar') || bulleted) return [{ type: 'list_item', level, ordered: false, text }];
  return [{ type: 'paragraph', text }];
}

function readRuns(p: XmlElement, rels: Rels, inline: InlineBuilder): void {
  for (const r of elements(p)) {
    if (r.name === 'a:br') inline.add('\n');
    if (r.name !== 'a:r' && r.name !== 'a:fld') continue;
    const rPr = child(r, 'a:rPr');
    const style: RunStyle = {};
    if (rPr?.attrs.b !== undefined && isOn(rPr.attrs.b)) style.bold = true;
    if (rPr?.attrs.i !== undefined && isOn(rPr.attrs.i)) style.italic = true;
    if (rPr?.attrs.strike && rPr.attrs.strike !== 'noStrike') style.strike = true;
    const font = child(rPr, 'a:latin')?.attrs.typeface;
    if (font && /courier|consolas|mono|menlo|monaco/i.test(font)) style.code = true;
    const link = rels.get(child(rPr, 'a:hlinkClick')?.attrs['r:id'] ?? '');
    if (link?.external) style.href = link.target;
    inline.add(textOf(child(r, 'a:t')), style);
  }
}

/** A DrawingML table: `gridSpan`/`rowSpan` on the spanning cell, `hMerge`/`vMerge` on the cells it covers. */
function table(tbl: XmlElement, rels: Rels): DocBlock {
  const rows: TableCell[][] = [];
  for (const tr of elements(tbl, 'a:tr')) {
    const row: TableCell[] = [];
    for (const tc of elements(tr, 'a:tc')) {
      if (isOn(tc.attrs.hMerge ?? '0') || isOn(tc.attrs.vMerge ?? '0')) continue;
      const inline = new InlineBuilder();
      elements(child(tc, 'a:txBody'), 'a:p').forEach((p, i) => {
        if (i) inline.add('\n');
        readRuns(p, rels, inline);
      });
      const cell: TableCell = { text: inline.build() };
      const colspan = Number(tc.attrs.gridSpan ?? 1);
      const rowspan = Number(tc.attrs.rowSpan ?? 1);
      if (colspan > 1) cell.colspan = colspan;
      if (rowspan > 1) cell.rowspan = rowspan;
      row.push(cell);
    }
    rows.push(row);
  }
  const firstRow = isOn(child(tbl, 'a:tblPr')?.attrs.firstRow ?? '0');
  return firstRow ? { type: 'table', rows, headerRows: 1 } : { type: 'table', rows };
}

/** The notes slide's body placeholder text (not the slide image or the slide number). */
function notesOf(notes: XmlElement): string {
  const texts: string[] = [];
  for (const sp of descendants(path(notes, 'p:cSld', 'p:spTree'), 'p:sp')) {
    if (placeholder(sp) !== 'body') continue;
    for (const p of elements(child(sp, 'p:txBody'), 'a:p')) {
      const t = elements(p)
        .map((r) => (r.name === 'a:br' ? '\n' : textOf(child(r, 'a:t'))))
        .join('')
        .trim();
      if (t) texts.push(t);
    }
  }
  return texts.join('\n');
}
