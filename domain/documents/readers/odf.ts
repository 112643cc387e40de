/**
 * OpenDocument (ODF 1.2) text, spreadsheet and presentation files to the document model. ODT: one `document` part
 * of the body's blocks (odf-text.ts) with its notes after them; ODS: one `sheet` part per table (odf-sheet.ts); ODP:
 * one `slide` part per `draw:page`, named by its title frame, with the notes page as `speaker_notes`. Metadata from
 * meta.xml. No macro (Basic/scripts in the package) is ever run: only content.xml, styles.xml, meta.xml and the
 * pictures the content names are read.
 */
import type { DocBlock, DocPart, DocumentReader } from '../model';
import { child, descendants, elements, type XmlElement } from '../xml';
import { openZip } from '../zip';
import { ImageCollector } from './ooxml-package';
import { openOdf } from './odf-package';
import { flatText, readOdfBlocks, type OdfContext } from './odf-text';
import { readOds } from './odf-sheet';

export { readOds };

export const readOdt: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const { body, styles, meta } = await openOdf(zip, limits, 'text');
    const ctx: OdfContext = { styles, images: new ImageCollector(zip), notes: [] };
    const blocks: DocBlock[] = [];
    await readOdfBlocks(body, ctx, blocks);
    blocks.push(...ctx.notes);
    return { format: 'odt', ...meta, parts: [{ kind: 'document', blocks }], images: ctx.images.images };
  } finally {
    zip.close();
  }
};

export const readOdp: DocumentReader = async (bytes, limits) => {
  const zip = await openZip(bytes, limits);
  try {
    const { body, styles, meta } = await openOdf(zip, limits, 'presentation');
    const images = new ImageCollector(zip);
    const parts: DocPart[] = [];
    for (const page of elements(body, 'draw:page')) {
      const ctx: OdfContext = { styles, images, notes: [] };
      const blocks: DocBlock[] = [];
      let title = '';
      for (const shape of elements(page)) {
        if (shape.name === 'presentation:notes') continue;
        if (!title && shape.attrs['presentation:class'] === 'title') {
          title = (await flatText(child(shape, 'draw:text-box'), ctx)).replace(/\s+/g, ' ').trim();
          if (title) blocks.push({ type: 'heading', level: 1, text: title });
          continue;
        }
        await readShape(shape, ctx, blocks);
      }
      const notes = await speakerNotes(child(page, 'presentation:notes'), ctx);
      blocks.push(...ctx.notes);
      if (notes) blocks.push({ type: 'note', kind: 'speaker_notes', text: notes });
      parts.push(title ? { kind: 'slide', name: title, blocks } : { kind: 'slide', blocks });
    }
    return { format: 'odp', ...meta, parts, images: images.images };
  } finally {
    zip.close();
  }
};

/** A slide's shape: frames (text boxes, pictures, tables) through the text reader; shapes and groups by their text. */
async function readShape(shape: XmlElement, ctx: OdfContext, out: DocBlock[]): Promise<void> {
  if (shape.name === 'draw:frame') {
    const wrapper: XmlElement = { name: '#shape', attrs: {}, children: [shape] };
    await readOdfBlocks(wrapper, ctx, out);
  } else if (shape.name === 'draw:g') {
    for (const c of elements(shape)) await readShape(c, ctx, out);
  } else if (shape.name.startsWith('draw:')) {
    // Custom shapes, rectangles, ellipses... carry their text as paragraphs and lists directly.
    await readOdfBlocks(shape, ctx, out);
  }
}

/** The notes page's text frame (`presentation:class="notes"`); its page thumbnail is not text. */
async function speakerNotes(notes: XmlElement | undefined, ctx: OdfContext): Promise<string> {
  const texts: string[] = [];
  for (const frame of descendants(notes, 'draw:frame'))
    if (frame.attrs['presentation:class'] === 'notes' || child(frame, 'draw:text-box'))
      texts.push(await flatText(child(frame, 'draw:text-box'), ctx));
  return texts.filter((t) => t).join('\n');
}
