import { expect } from 'chai';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { child, descendants, parseXml, textOf } from '../../domain/documents/xml';

const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
  Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('') +
  ']><lolz>&lol9;</lolz>';

function refused(fn: () => unknown): DocumentError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DocumentError);
    return err as DocumentError;
  }
  throw new Error('expected a refusal');
}

describe('bounded XML parsing', () => {
  it('names elements and attributes by a canonical prefix per namespace, whatever prefix the file used', () => {
    const root = parseXml(
      '<x:document xmlns:x="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
        '<x:p x:rsid="1"><x:t>Hi</x:t> <x:t>there</x:t></x:p></x:document>',
      DEFAULT_READ_LIMITS,
    );
    expect(root.name).to.equal('w:document');
    expect(child(root, 'w:p')?.attrs).to.deep.equal({ 'w:rsid': '1' });
    expect(descendants(root, 'w:t').map(textOf)).to.deep.equal(['Hi', 'there']);
    expect(textOf(root)).to.equal('Hi there');
  });

  it('skips the subtrees asked for, by canonical name, still bounding their depth', () => {
    const ns = 'xmlns:o="urn:oasis:names:tc:opendocument:xmlns:office:1.0"';
    const xml = `<o:document-styles ${ns}><o:styles>kept</o:styles><o:master-styles><a><b>drawn</b></a></o:master-styles></o:document-styles>`;
    const root = parseXml(xml, DEFAULT_READ_LIMITS, { skip: new Set(['office:master-styles']) });
    expect(root.children.map((c) => (typeof c === 'string' ? c : c.name))).to.deep.equal(['office:styles']);
    expect(textOf(root)).to.equal('kept');
    const deep = `<o:r ${ns}><o:master-styles>${'<a>'.repeat(20)}${'</a>'.repeat(20)}</o:master-styles></o:r>`;
    const err = refused(() =>
      parseXml(deep, { ...DEFAULT_READ_LIMITS, maxXmlDepth: 10 }, { skip: new Set(['office:master-styles']) }),
    );
    expect(err.reason).to.equal('too_deep');
  });

  it('refuses a billion-laughs document at its DOCTYPE, quickly', () => {
    const started = Date.now();
    const err = refused(() => parseXml(BILLION_LAUGHS, DEFAULT_READ_LIMITS));
    expect(err).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'xml_entities' });
    expect(Date.now() - started).to.be.below(500);
  });

  it('never resolves an external entity (a SYSTEM entity is refused like any declared entity)', () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>';
    expect(refused(() => parseXml(xxe, DEFAULT_READ_LIMITS)).reason).to.equal('xml_entities');
  });

  it('treats an undeclared entity as malformed XML, not as text to fetch', () => {
    expect(refused(() => parseXml('<r>&ext;</r>', DEFAULT_READ_LIMITS)).reason).to.equal('corrupt');
  });

  it('accepts HTML named references in XHTML when asked, and a DOCTYPE without entities', () => {
    const root = parseXml(
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">' +
        '<html xmlns="http://www.w3.org/1999/xhtml"><p>a&nbsp;b&mdash;c</p></html>',
      DEFAULT_READ_LIMITS,
      { htmlEntities: true },
    );
    expect(root.name).to.equal('h:html');
    expect(textOf(root)).to.equal('a\u00a0b—c');
  });

  it('refuses nesting deeper than the limit and accepts it at the limit', () => {
    const limits = { ...DEFAULT_READ_LIMITS, maxXmlDepth: 50 };
    const nest = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
    expect(refused(() => parseXml(nest(51), limits))).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'too_deep' });
    expect(() => parseXml(nest(50), limits)).to.not.throw();
  });

  it('stops early on a hostile deep document instead of building all of it', () => {
    const started = Date.now();
    expect(refused(() => parseXml('<a>'.repeat(2_000_000), DEFAULT_READ_LIMITS)).reason).to.equal('too_deep');
    expect(Date.now() - started).to.be.below(1000);
  });

  it('answers corrupt for malformed XML', () => {
    expect(refused(() => parseXml('<a><b></a>', DEFAULT_READ_LIMITS)).reason).to.equal('corrupt');
    expect(refused(() => parseXml('', DEFAULT_READ_LIMITS)).reason).to.equal('corrupt');
  });
});
