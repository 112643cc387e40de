import { expect } from 'chai';
import { groundFields } from '../../domain/grounding/ground';
import { findValue, sourceOf } from '../../domain/grounding/match';
import { placeInTime, placeOnPages, timedTexts } from '../../domain/grounding/place';

// Grounded template fields (contract §14) on texts written here: values found as written, as dates and by their
// words; invented ones emptied and named; spans that hold their value; pages, boxes and seconds placed.

const INVOICE =
  'Malerbetrieb Kowalski\nLindenstraße 12, 79098 Freiburg\n\nRechnung Nr. 2025-0417\nFreiburg, den 22. April 2025\n\n' +
  'Nettobetrag: 1.150,50 €\nGesamtbetrag: 1.369,10 €\n\nBitte überweisen Sie den Betrag auf unser Konto, IBAN DE12 6805 0101 0012 3456 78.';

const found = (text: string, value: string) => {
  const at = findValue(sourceOf(text), value);
  return at && text.slice(at.start, at.end);
};

describe('grounding: where a value stands in its text', () => {
  it('finds a value as written up to case, spaces and punctuation, on word boundaries only', () => {
    expect(found(INVOICE, 'DE12680501010012345678')).to.equal('DE12 6805 0101 0012 3456 78');
    expect(found(INVOICE, '1369,10 €')).to.equal('1.369,10 €');
    expect(found(INVOICE, '1369,10')).to.equal('1.369,10');
    expect(found('Price: €39.99 incl. VAT, 19% off', '€39.99')).to.equal('€39.99');
    expect(found('Price: €39.99 incl. VAT, 19% off', '19 %')).to.equal('19%');
    expect(found(INVOICE, 'nr. 2025-0417')).to.equal('Nr. 2025-0417');
    expect(found(INVOICE, 'LINDENSTRASSE 12')).to.equal('Lindenstraße 12');
    // `41` and `0101 0012` are inside longer numbers: not a value of the text.
    expect(found(INVOICE, '41')).to.equal(null);
    expect(found(INVOICE, '1012')).to.equal(null);
  });

  it('finds an ISO date the text writes another way, and no other day', () => {
    expect(found(INVOICE, '2025-04-22')).to.equal('22. April 2025');
    expect(found('Filed on 04/22/2025 by the clerk.', '2025-04-22')).to.equal('04/22/2025');
    expect(found('Le colloque a lieu le 3 mars 2026 à Lyon.', '2026-03-03')).to.equal('3 mars 2026');
    expect(found('Opening on March 5th, 2026 in Leeds.', '2026-03-05')).to.equal('March 5th, 2026');
    expect(found('Am 16.05. um 10 Uhr, Programm 2025.', '2025-05-16')).to.equal('16.05.');
    expect(found(INVOICE, '2025-05-06')).to.equal(null);
    expect(found(INVOICE, '2024-04-22')).to.equal(null);
    // A date and time: the day, and the time written near it.
    const warning = 'Storm warning from Tuesday, 28 January 2025, 6 p.m. until Wednesday 29.01.2025, 09:00.';
    expect(found(warning, '2025-01-28 18:00')).to.equal('28 January 2025, 6 p.m.');
    expect(found(warning, '2025-01-29T09:00')).to.equal('29.01.2025, 09:00');
    expect(found(warning, '2025-01-28 20:00')).to.equal(null);
    // A day and month without a year, in a text that names no year: not enough.
    expect(found('See you on 16 May at the harbour.', '2025-05-16')).to.equal(null);
  });

  it('finds a short value by its words close together, a long one by most of its words, and every number', () => {
    const text =
      'In this talk, Maria Lopez shows how the city of Valencia publishes its bus timetables as open data. ' +
      'The data set covers 212 lines and is updated every night.';
    expect(found(text, 'Lopez, Maria')).to.equal('Maria Lopez');
    expect(found(text, 'Maria Garcia')).to.equal(null);
    expect(found(text, 'published timetables')).to.equal('publishes its bus timetables');
    const summary = 'Maria Lopez shows how Valencia publishes bus timetables as open data, updated every night.';
    expect(found(text, summary)).to.be.a('string').and.include('Maria Lopez').and.include('night');
    expect(found(text, 'A talk about 300 bus lines in Valencia')).to.equal(null);
    expect(found(text, 'The speaker explains climate policy, carbon taxes and electric cars in Norway.')).to.equal(
      null,
    );
  });

  it('empties what the text does not hold, names those fields, keeps the rest with spans that hold them', () => {
    const g = groundFields(
      {
        invoice_number: '2025-0417',
        invoice_date: '2025-04-22',
        iban: 'DE12 6805 0101 0012 3456 78',
        tax_number: 'DE 287 654 321',
        due_date: '2025-05-06',
        notes: '',
        people: ['Piotr Kowalski', 'Frau Berger'],
        places: ['Freiburg', 'Hamburg'],
      },
      INVOICE,
    );
    expect(g.unsupported).to.deep.equal(['tax_number', 'due_date', 'people']);
    expect(g.fields).to.deep.include({ tax_number: '', due_date: '', notes: '', people: [], places: ['Freiburg'] });
    expect(g.fields.iban).to.equal('DE12 6805 0101 0012 3456 78');
    expect(g.sources.tax_number).to.equal(null);
    expect(g.sources.notes).to.equal(null);
    for (const name of ['invoice_number', 'invoice_date', 'iban']) {
      const s = g.sources[name]!;
      expect(INVOICE.slice(s.start, s.end), name).to.equal(s.text);
    }
    expect(g.sources.invoice_date!.text).to.equal('22. April 2025');
    expect(g.sources.places!.items!.map((i) => i.text)).to.deep.equal(['Freiburg']);
  });

  it('places a source on the page and box of its block, and in the seconds of its words', () => {
    const text = 'Title\n\nThe crane on pier seven needs new cables.\n\nFerry timetables change on 1 May 2026.';
    const blocks = [
      { start: 0, end: 5, page: 1, bbox: [72, 60, 200, 80] as [number, number, number, number] },
      { start: 7, end: 49, page: 1, bbox: [72, 100, 500, 130] as [number, number, number, number] },
      { start: 51, end: text.length, page: 2, bbox: [72, 60, 480, 90] as [number, number, number, number] },
    ];
    const g = groundFields({ change: '2026-05-01', what: 'the crane needs cables' }, text);
    const placed = placeOnPages(g.sources, blocks);
    expect(placed.change).to.include({ page: 2, text: '1 May 2026' });
    expect(placed.change!.bbox).to.deep.equal([72, 60, 480, 90]);
    expect(placed.what).to.include({ page: 1 });

    const segments = [
      {
        start: 0,
        end: 3,
        text: ' Hello and welcome.',
        words: [
          { word: ' Hello', start: 0, end: 0.6 },
          { word: ' and', start: 0.7, end: 0.9 },
          { word: ' welcome.', start: 1, end: 2.5 },
        ],
      },
      { start: 3.2, end: 7.5, text: ' The ferry leaves at nine from pier seven.' },
    ];
    const transcript = 'Hello and welcome. The ferry leaves at nine from pier seven.';
    const timed = timedTexts(transcript, segments);
    const t = placeInTime(groundFields({ greeting: 'welcome', pier: 'pier seven' }, transcript).sources, timed);
    expect(t.greeting).to.include({ start_s: 1, end_s: 2.5 });
    expect(t.pier).to.include({ start_s: 3.2, end_s: 7.5 });
  });
});
