export { htmlToMarkdown } from './markdown';
export { expandTableSpans, extractTables, type ExtractedTable, type SpanLimits } from './tables';
