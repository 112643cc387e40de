export { htmlToMarkdown } from './markdown';
export { expandTableSpans, extractTables, type ExtractedTable } from './tables';
