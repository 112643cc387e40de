/**
 * What the API reports about a document (spec `metadata`), and how many pages it has; either text engine answers it.
 */
export interface PdfDescription {
  pageCount: number;
  title: string;
  author: string;
}
