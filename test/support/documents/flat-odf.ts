/**
 * Flat ODF documents (one XML file: `.fodt`, `.fods`, `.fodp`) the tests write so every expected heading, cell and
 * slide is known; the real LibreOffice converts them to the formats under test (DOCX, DOC, XLSX, PPTX, ODT...).
 */

const NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" ' +
  'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ' +
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" ' +
  'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" ' +
  'xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" ' +
  'xmlns:office-ooo="http://openoffice.org/2004/office" ' +
  'xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" ' +
  'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xlink="http://www.w3.org/1999/xlink" ' +
  'xmlns:ooo="http://openoffice.org/2004/office" office:version="1.3"';

/** A flat ODF document of `mime` (`text`, `spreadsheet`, `presentation`): its body, automatic styles and metadata. */
export const flatOdf = (mime: string, body: string, styles = '', meta = ''): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<office:document ${NS} office:mimetype="application/vnd.oasis.opendocument.${mime}">` +
  `<office:meta>${meta}</office:meta><office:automatic-styles>${styles}</office:automatic-styles>` +
  `<office:body>${body}</office:body></office:document>`;

/** A text document of `pages` pages: each a level-1 heading "Chapter N" (a page break before) and `paras` paragraphs. */
export function chaptersDocument(pages: number, paras = 8): string {
  const body: string[] = [];
  for (let p = 1; p <= pages; p++) {
    body.push(`<text:h text:outline-level="1"${p > 1 ? ' text:style-name="PB"' : ''}>Chapter ${p}</text:h>`);
    for (let i = 1; i <= paras; i++)
      body.push(
        `<text:p>Paragraph ${i} of chapter ${p}. ${'Lorem ipsum dolor sit amet, consectetur adipiscing. '.repeat(5)}</text:p>`,
      );
  }
  const pb =
    '<style:style style:name="PB" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style>';
  return flatOdf('text', `<office:text>${body.join('')}</office:text>`, pb);
}

/** A presentation object Impress keeps as one (a frame without a presentation style is saved as a plain frame). */
export const pframe = (cls: string, y: number, inner: string) =>
  `<draw:frame presentation:style-name="pr1" presentation:class="${cls}" presentation:user-transformed="true" ` +
  `draw:layer="layout" svg:x="1cm" svg:y="${y}cm" svg:width="20cm" svg:height="3cm"><draw:text-box>${inner}` +
  '</draw:text-box></draw:frame>';

/** A string cell, or a float cell with its value. */
const cell = (v: string | number) =>
  typeof v === 'number'
    ? `<table:table-cell office:value-type="float" office:value="${v}"><text:p>${v}</text:p></table:table-cell>`
    : `<table:table-cell office:value-type="string"><text:p>${v}</text:p></table:table-cell>`;

/** A spreadsheet of named sheets, each rows of string and number cells. */
export const flatSheets = (sheets: Record<string, Array<Array<string | number>>>): string =>
  flatOdf(
    'spreadsheet',
    '<office:spreadsheet>' +
      Object.entries(sheets)
        .map(
          ([name, rows]) =>
            `<table:table table:name="${name}">` +
            rows.map((r) => `<table:table-row>${r.map(cell).join('')}</table:table-row>`).join('') +
            '</table:table>',
        )
        .join('') +
      '</office:spreadsheet>',
  );

/** A presentation of slides with these titles (title frames only). */
export const flatTitleSlides = (titles: string[]): string =>
  flatOdf(
    'presentation',
    '<office:presentation>' +
      titles
        .map(
          (t, i) =>
            `<draw:page draw:name="s${i + 1}"><draw:frame presentation:class="title" svg:x="1cm" svg:y="1cm" svg:width="20cm" svg:height="3cm">` +
            `<draw:text-box><text:p>${t}</text:p></draw:text-box></draw:frame></draw:page>`,
        )
        .join('') +
      '</office:presentation>',
  );
