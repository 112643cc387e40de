import { DocumentError, type DocBlock, type DocumentModel, type DocumentReader } from '../model';
import { decodeText } from '../text-decode';

/**
 * Plain text and Markdown. Markdown is kept as the file wrote it (`markdown` blocks, one per block of the source:
 * fenced code kept whole), split only so the renderer can separate blocks and read the title; plain text is one
 * paragraph per run of non-blank lines, its line breaks kept.
 */

/** Splits Markdown at blank lines outside fenced code. */
function markdownBlocks(md: string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    if (cur.some((l) => l.trim())) out.push(cur.join('\n'));
    cur = [];
  };
  for (const line of md.split(/\r?\n/)) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      cur.push(line);
      if (f && f[0] === fence[0] && f.length >= fence.length) fence = null;
      continue;
    }
    if (f) fence = f;
    if (!fence && line.trim() === '') flush();
    else cur.push(line);
  }
  flush();
  return out;
}

function tooLong(text: string, limit: number): void {
  if (text.length > limit)
    throw new DocumentError('PAYLOAD_TOO_LARGE', 'expansion_too_large', `The text is longer than ${limit} characters.`);
}

export const readMarkdown: DocumentReader = async (bytes, limits) => {
  const md = decodeText(bytes);
  tooLong(md, limits.maxUncompressedBytes);
  const blocks: DocBlock[] = markdownBlocks(md).map((text) => ({ type: 'markdown', text }));
  const title = /^\s{0,3}#\s+(.+?)\s*#*\s*$/m.exec(md)?.[1];
  return { format: 'markdown', ...(title ? { title } : {}), parts: [{ kind: 'document', blocks }], images: [] };
};

export const readText: DocumentReader = async (bytes, limits): Promise<DocumentModel> => {
  const text = decodeText(bytes);
  tooLong(text, limits.maxUncompressedBytes);
  const blocks: DocBlock[] = text
    .split(/\r?\n[ \t]*\r?\n/)
    .map((p) => p.replace(/\s+$/, '').replace(/^\s*\n/, ''))
    .filter((p) => p.trim())
    .map((p) => ({ type: 'paragraph', text: p }));
  return { format: 'text', parts: [{ kind: 'document', blocks }], images: [] };
};
