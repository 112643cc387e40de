import { expect } from 'chai';
import { documentMarkdown } from '../../domain/pdf/markdown/document';
import type { LayoutItem, PageLayout } from '../../domain/pdf/markdown/types';

/** A text item as poppler gives it: its left and right edge, its baseline, 11 pt like the manual's text. */
const at = (x0: number, x1: number, y: number, str: string, extra: Partial<LayoutItem> = {}): LayoutItem => ({
  str,
  x: x0,
  y,
  w: x1 - x0,
  size: 11,
  ...extra,
});

const md = (items: LayoutItem[]) =>
  documentMarkdown([{ page: 1, width: 612, height: 792, items, segments: [] } satisfies PageLayout]).markdown;

const intro = [
  at(90, 522, 700, 'The ciphers below are supported by the library, each with the protocols it applies to and'),
  at(90, 300, 686.9, 'a description of what it does for the record layer.'),
];

/**
 * GnuTLS manual, page 15 (Table 3.1, a Texinfo @multitable printed by pdfTeX), as `pdftohtml -xml` reads it: a bold
 * header whose third cell wraps, cells of two to four lines, a justified cell cut at a stretched space ("TLS" "1.2,"),
 * and "(block)" and "TLS" of two columns closer than a cut (one run of text over the column edge).
 */
const cipherTable = [
  ...[
    at(90.0, 139.3, 655.7, 'Algorithm'),
    at(188.4, 212.9, 655.7, 'Type'),
    at(231.6, 282.3, 655.7, 'Applicable'),
    at(231.6, 276.8, 642.6, 'Protocols'),
    at(296.4, 351.5, 655.7, 'Description'),
  ].map((i) => ({ ...i, bold: true })),
  at(90.0, 164.8, 628.3, 'AES-128-GCM,'),
  at(90.0, 161.7, 615.2, 'AES-256-GCM'),
  at(188.3, 220.5, 628.3, 'AEAD'),
  at(231.6, 252.3, 628.3, 'TLS'),
  at(267.4, 284.4, 628.3, '1.2,'),
  at(231.6, 269.9, 615.2, 'TLS 1.3'),
  at(296.4, 522.0, 628.3, 'This is the AES algorithm in the authenticated'),
  at(296.4, 522.0, 615.2, 'encryption GCM mode. This mode combines'),
  at(296.4, 522.0, 602.0, 'message authentication and encryption and can'),
  at(296.4, 522.0, 588.9, 'be extremely fast on CPUs that support hard-'),
  at(296.4, 381.6, 575.7, 'ware acceleration.'),
  at(90.0, 164.1, 548.3, 'AES-128-CCM,'),
  at(90.0, 161.1, 535.2, 'AES-256-CCM'),
  at(188.3, 220.5, 548.3, 'AEAD'),
  at(231.6, 269.9, 548.3, 'TLS 1.2'),
  at(296.4, 522.0, 548.3, 'This is the AES algorithm in the authenticated'),
  at(296.4, 522.0, 535.2, 'encryption CCM mode, often used by systems'),
  at(296.4, 396.2, 522.0, 'without acceleration.'),
  ...[
    at(90.0, 152.9, 548.3, 'CAMELLIA-'),
    at(90.0, 139.5, 535.1, '128-GCM,'),
    at(90.0, 172.9, 522.0, 'CAMELLIA-256-'),
    at(90.0, 116.4, 508.8, 'GCM'),
    at(188.3, 220.5, 548.3, 'AEAD'),
    at(231.6, 269.9, 548.3, 'TLS 1.2'),
    at(296.4, 522.0, 548.3, 'This is the CAMELLIA algorithm in the au-'),
    at(296.4, 466.8, 535.1, 'thenticated encryption GCM mode.'),
    // A row below a cell of four lines: 14.2 pt below it, the lines of a cell are 13.1 pt apart.
    at(90.0, 161.8, 494.6, 'AES-128-CBC,'),
    at(90.0, 158.8, 481.4, 'AES-256-CBC'),
    at(188.3, 221.5, 494.6, 'Legacy'),
    at(188.3, 222.0, 481.4, '(block)'),
    at(231.6, 252.3, 494.6, 'TLS'),
    at(267.4, 284.4, 494.6, '1.0,'),
    at(231.6, 252.3, 481.4, 'TLS'),
    at(267.4, 284.4, 481.4, '1.1,'),
    at(231.6, 269.9, 468.3, 'TLS 1.2'),
    at(296.4, 522.0, 494.6, 'AES or RIJNDAEL is the block cipher algo-'),
    at(296.4, 522.0, 481.4, 'rithm that replaces the old DES algorithm. It'),
    at(296.4, 522.0, 468.3, 'has 128 bits block size and is used in CBC mode.'),
  ].map((i) => ({ ...i, y: i.y - 53.4 })),
];

describe('PDF to Markdown: tables whose cells wrap', () => {
  it('reads a Texinfo multitable with wrapped cells as one GFM row per table row, cell lines joined', () => {
    const out = md([...intro, ...cipherTable, at(90, 268, 384.7, 'Table 3.1: Supported ciphers in TLS.')]);
    expect(out).to.equal(
      [
        'The ciphers below are supported by the library, each with the protocols it applies to and a description of what it does for the record layer.',
        '',
        '| Algorithm | Type | Applicable Protocols | Description |',
        '| --- | --- | --- | --- |',
        '| AES-128-GCM, AES-256-GCM | AEAD | TLS 1.2, TLS 1.3 | This is the AES algorithm in the authenticated encryption GCM mode. This mode combines message authentication and encryption and can be extremely fast on CPUs that support hardware acceleration. |',
        '| AES-128-CCM, AES-256-CCM | AEAD | TLS 1.2 | This is the AES algorithm in the authenticated encryption CCM mode, often used by systems without acceleration. |',
        '| CAMELLIA-128-GCM, CAMELLIA-256-GCM | AEAD | TLS 1.2 | This is the CAMELLIA algorithm in the authenticated encryption GCM mode. |',
        '| AES-128-CBC, AES-256-CBC | Legacy (block) | TLS 1.0, TLS 1.1, TLS 1.2 | AES or RIJNDAEL is the block cipher algorithm that replaces the old DES algorithm. It has 128 bits block size and is used in CBC mode. |',
        '',
        'Table 3.1: Supported ciphers in TLS.',
      ].join('\n'),
    );
  });

  it('takes a row apart by its first cell when rows are as close as lines, below a wrapped cell a little further', () => {
    // GnuTLS manual, page 346 (error codes, no header): a row's lines 13.1 pt apart, a row below one of two lines
    // 14.2 pt below it.
    const rows = [
      at(90.0, 104.5, 684.1, '-29'),
      at(166.8, 280.2, 684.1, 'GNUTLS_E_EXPIRED'),
      at(339.6, 487.4, 684.1, 'The session or certificate has'),
      at(339.6, 377.5, 671.0, 'expired.'),
      at(90.0, 104.5, 656.8, '-30'),
      at(166.8, 290.0, 656.8, 'GNUTLS_E_DB_ERROR'),
      at(339.6, 470.9, 656.8, 'Error in Database backend.'),
      at(90.0, 104.5, 643.6, '-31'),
      at(166.8, 317.8, 643.6, 'GNUTLS_E_SRP_PWD_ERROR'),
      at(339.6, 467.2, 643.6, 'Error in password/key file.'),
      at(90.0, 104.5, 630.5, '-32'),
      at(166.8, 317.8, 630.5, 'GNUTLS_E_INSUFFICIENT_'),
      at(166.8, 246.9, 617.3, 'CREDENTIALS'),
      at(339.6, 487.4, 630.5, 'Insufficient credentials for that'),
      at(339.6, 376.9, 617.3, 'request.'),
      at(90.0, 104.5, 603.0, '-33'),
      at(166.8, 305.5, 603.0, 'GNUTLS_E_HASH_FAILED'),
      at(339.6, 430.0, 603.0, 'Hashing has failed.'),
    ];
    const out = md([...intro, ...rows]);
    expect(out).to.include(
      [
        '| -29 | GNUTLS_E_EXPIRED | The session or certificate has expired. |',
        '| --- | --- | --- |',
        '| -30 | GNUTLS_E_DB_ERROR | Error in Database backend. |',
        '| -31 | GNUTLS_E_SRP_PWD_ERROR | Error in password/key file. |',
        '| -32 | GNUTLS_E_INSUFFICIENT_CREDENTIALS | Insufficient credentials for that request. |',
        '| -33 | GNUTLS_E_HASH_FAILED | Hashing has failed. |',
      ].join('\n'),
    );
  });

  it('keeps a first cell cut inside an identifier one cell, in a table of one row under its header', () => {
    // GnuTLS manual, page 345: one row, its lines as far apart as a row from the next would be.
    const out = md([
      ...intro,
      at(90, 150, 145.9, 'Old function', { bold: true }),
      at(232, 293, 145.9, 'Replacement', { bold: true }),
      at(90, 205, 118.1, 'gnutls_privkey_sign_', { mono: true }),
      at(232, 479, 118.1, 'The function gnutls_privkey_sign_hash'),
      at(90, 136, 104.9, 'raw_data', { mono: true }),
      at(232, 479, 104.9, 'is equivalent when the flag GNUTLS_PRIVKEY_SIGN_'),
      at(232, 364, 91.8, 'FLAG_TLS1_RSA is specified.'),
    ]);
    expect(out).to.include(
      [
        '| Old function | Replacement |',
        '| --- | --- |',
        '| gnutls_privkey_sign_raw_data | The function gnutls_privkey_sign_hash is equivalent when the flag GNUTLS_PRIVKEY_SIGN_FLAG_TLS1_RSA is specified. |',
      ].join('\n'),
    );
  });

  it('ends the table at prose below it, a bold label or a heading, and takes no two columns of prose for one', () => {
    const out = md([
      ...intro,
      ...cipherTable,
      at(90, 522, 401.8, 'The ciphers are listed in the order the library prefers them, when the priority string'),
      at(90, 200, 388.6, 'does not say otherwise.'),
    ]);
    expect(out).to.include('used in CBC mode. |\n\nThe ciphers are listed in the order the library prefers them');
    const label = md([...intro, ...cipherTable, at(90, 150, 401.8, 'Comments', { bold: true })]);
    expect(label).to.match(/used in CBC mode\. \|\n\n(# |\*\*)Comments/);

    // R Data Import/Export, page 23: a table of two columns (rows 19.7 pt apart, lines 12.7), the paragraph below it
    // as far down and across both columns, which a cut at the column edge would make a row.
    const types = md([
      ...intro,
      at(90, 136, 374.4, 'smallint', { mono: true }),
      at(148, 212, 374.4, '16-bit integer'),
      at(90, 159, 354.7, 'character(n)', { mono: true }),
      at(148, 378, 342.0, 'fixed-length character string. Often called char.'),
      at(90, 202, 321.9, 'character varying(n)', { mono: true }),
      at(148, 522, 309.2, 'variable-length character string. Often called varchar. Almost always has a'),
      at(148, 234, 296.0, 'limit of 255 chars.'),
      at(90, 130, 275.9, 'boolean', { mono: true }),
      at(148, 359, 275.9, 'true or false. Sometimes called bool or bit.'),
      at(90, 113, 256.2, 'date', { mono: true }),
      at(148, 212, 256.2, 'calendar date'),
      at(90, 113, 236.6, 'time', { mono: true }),
      at(148, 202, 236.6, 'time of day'),
      at(90, 142, 216.9, 'timestamp', { mono: true }),
      at(148, 214, 204.2, 'date and time'),
      at(90, 522, 184.2, 'There are variants on time and timestamp, with timezone. Other types widely imple-'),
      at(90, 477, 171.1, 'mented are text and blob, for large blocks of text and binary data, respectively.'),
    ]);
    expect(types).to.include('| boolean | true or false. Sometimes called bool or bit. |');
    expect(types).to.include('\n\nThere are variants on time and timestamp, with timezone.');
    expect(types).to.not.match(/\|[^\n]*There are variants/);

    const prose = (x: number, y: number, lines: string[]) => lines.map((l, i) => at(x, x + 220, y - 13.1 * i, l));
    const columns = md([
      ...prose(90, 650, [
        'The first column of the page holds prose,',
        'a paragraph of several lines that runs on',
        'to the end of its thought at the bottom.',
      ]),
      ...prose(90, 600.7, ['A second paragraph stands below it, and', 'it too runs on over some lines of text.']),
      ...prose(320, 650, [
        'The second column holds prose as well, and',
        'its lines stand beside those of the first',
        'one, at the same baselines, as in a paper.',
      ]),
      ...prose(320, 600.7, ['Its second paragraph is as long as the', 'first one of the left column of the page.']),
    ]);
    expect(columns).to.not.include('|');
  });
});
