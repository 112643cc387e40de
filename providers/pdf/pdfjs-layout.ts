/**
 * A page's drawings (`drawings.ts`) from pdf.js's operator list: the painted paths, with the current transform followed
 * through save, restore, transforms and form XObjects. Used for a file our content-stream reader
 * (`content-drawings.ts`) leaves to pdf.js. Runs where pdf.js runs (its thread).
 */
import type { PDFDocumentProxy } from 'pdfjs-dist/types/src/display/api';
import { DrawingsSink, mul, type Matrix, type PageDrawings } from '../../domain/pdf/drawings';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

/**
 * Each painted path of an operator list to `sink`, with the current transform followed through save, restore,
 * transforms and form XObjects.
 */
function drawingsOf(pdfjs: PdfJs, ops: { fnArray: number[]; argsArray: unknown[] }): DrawingsSink {
  const O = pdfjs.OPS;
  const sink = new DrawingsSink();
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  for (let i = 0; i < ops.fnArray.length && sink.open; i++) {
    const fn = ops.fnArray[i];
    const args = ops.argsArray[i] as unknown[];
    if (fn === O.save) stack.push(ctm);
    else if (fn === O.restore) ctm = stack.pop() ?? ctm;
    else if (fn === O.transform) ctm = mul(ctm, args as Matrix);
    else if (fn === O.paintFormXObjectBegin) {
      stack.push(ctm);
      // The form's matrix comes as a Float32Array.
      const m = args[0] as ArrayLike<number> | null;
      if (m && m.length === 6) ctm = mul(ctm, Array.from(m) as Matrix);
    } else if (fn === O.paintFormXObjectEnd) ctm = stack.pop() ?? ctm;
    else if (fn === O.constructPath) {
      const [paint, data, minMax] = args as [number, [ArrayLike<number> | null], ArrayLike<number> | null];
      if (paint === O.endPath || !data?.[0] || !minMax) continue;
      sink.add(paint === O.stroke || paint === O.closeStroke, data[0], minMax, ctm);
    }
  }
  return sink;
}

/** One page's drawings (1-based `n`) from its operator list, without its text. */
export async function readPageDrawings(pdfjs: PdfJs, doc: PDFDocumentProxy, n: number): Promise<PageDrawings> {
  const page = await doc.getPage(n);
  try {
    const [x0, y0] = page.view;
    return drawingsOf(pdfjs, await page.getOperatorList()).result(x0, y0);
  } finally {
    page.cleanup();
  }
}
