import Papa from 'papaparse';
import { DocumentError, type DocumentReader, type TableCell } from '../model';
import { decodeText } from '../text-decode';

/**
 * CSV and TSV as one sheet: a table of the file's rows, the first one its header. papaparse reads the quoting
 * (quoted delimiters and line breaks); the encoding is UTF-8 (BOM or not), UTF-16 by its BOM, else Latin-1.
 */

/** Cells a sheet may hold (a budget of the renderer's work, beside the upload's size). */
const MAX_CELLS = 5_000_000;

function reader(format: 'csv' | 'tsv'): DocumentReader {
  return async (bytes) => {
    const text = decodeText(bytes);
    const parsed = Papa.parse<string[]>(text, {
      delimiter: format === 'tsv' ? '\t' : '',
      delimitersToGuess: [',', ';', '\t', '|'],
      skipEmptyLines: 'greedy',
    });
    let cells = 0;
    const rows: TableCell[][] = parsed.data.map((r, i) => {
      cells += r.length;
      if (cells > MAX_CELLS)
        throw new DocumentError('PAYLOAD_TOO_LARGE', 'too_many_cells', `The sheet holds more than ${MAX_CELLS} cells.`);
      return r.map((v) => ({ text: v, ...(i === 0 ? { header: true } : {}) }));
    });
    return {
      format,
      parts: [{ kind: 'sheet', blocks: rows.length ? [{ type: 'table', rows, headerRows: 1 }] : [] }],
      images: [],
    };
  };
}

export const readCsv = reader('csv');
export const readTsv = reader('tsv');
