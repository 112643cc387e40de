import { expect } from 'chai';
import { MIN_CHARS, nonSpaceChars, scoreTextLayer, USABLE_SCORE } from '../../providers/pdf/text-layer';

const GERMAN =
  'Die Verarbeitung großer Dokumente erfolgt seitenweise. Für jede Seite prüft der Dienst, ob eine brauchbare ' +
  'Textebene vorhanden ist; andernfalls wird die Seite gerendert und mit Tesseract erkannt.';
const ENGLISH = 'The quick brown fox jumps over the lazy dog, and the report continues on the next page with figures.';

describe('text layer score', () => {
  it('finds ordinary German and English prose usable with a high score', () => {
    for (const text of [GERMAN, ENGLISH]) {
      const s = scoreTextLayer(text);
      expect(s.usable, text).to.equal(true);
      expect(s.score, text).to.be.greaterThan(0.9);
    }
  });

  it('finds an empty or whitespace-only text layer unusable with a score of zero', () => {
    for (const text of ['', '   \n\t  ']) expect(scoreTextLayer(text)).to.deep.equal({ score: 0, usable: false });
  });

  it('refuses a stray page number or stamp on an otherwise scanned page', () => {
    for (const text of ['3', 'Seite 3 von 10', 'SCANNED']) {
      const s = scoreTextLayer(text);
      expect(s.usable, text).to.equal(false);
      expect(s.score, text).to.be.lessThan(1);
    }
  });

  it('accepts exactly the minimum of non-space characters and refuses one less', () => {
    const word = 'Abcdefghij';
    const enough = `${word} ${word}`;
    expect(enough.replace(/\s/g, '').length).to.equal(MIN_CHARS);
    expect(scoreTextLayer(enough).usable).to.equal(true);
    expect(scoreTextLayer(enough.slice(0, -1)).usable).to.equal(false);
  });

  it('lowers the character minimum for a small page such as a label', () => {
    const text = 'Paket an Herrn';
    expect(scoreTextLayer(text).usable).to.equal(false);
    expect(scoreTextLayer(text, { width: 200, height: 100 }).usable).to.equal(true);
  });

  it('refuses text made of replacement characters from a font without a Unicode map', () => {
    const text =
      '\uFFFD\uFFFD\uFFFD\uFFFD \uFFFD\uFFFD\uFFFD \uFFFD\uFFFD\uFFFD\uFFFD\uFFFD \uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD';
    const s = scoreTextLayer(text.repeat(3));
    expect(s.usable).to.equal(false);
    expect(s.score).to.equal(0);
  });

  it('refuses private-use glyphs and control characters even when mixed with some letters', () => {
    const pua =
      'Rechnung \uE001\uE002\uE003\uE004 \uE010\uE011\uE012 \uF001\uF002\uF003\uF004\uF005 Betrag \uE020\uE021\uE022';
    expect(scoreTextLayer(pua).usable).to.equal(false);
    const control =
      'Ab\u0001\u0002\u0003 cd\u0004\u0005\u0006 ef\u0007\u0008\u000E gh\u0010\u0011\u0012 ij\u0013\u0014\u0015';
    expect(scoreTextLayer(control).usable).to.equal(false);
  });

  it('tolerates a few odd glyphs in otherwise clean text', () => {
    const s = scoreTextLayer(`${GERMAN} \uFFFD ${ENGLISH}`);
    expect(s.usable).to.equal(true);
    expect(s.score).to.be.greaterThan(0.8);
  });

  it('refuses words torn into isolated single letters', () => {
    const torn = 'D i e  V e r a r b e i t u n g  g r o ß e r  D o k u m e n t e  e r f o l g t  s e i t e n w e i s e';
    const s = scoreTextLayer(torn);
    expect(s.usable).to.equal(false);
    expect(s.score).to.be.lessThan(USABLE_SCORE);
  });

  it('accepts a table of numbers with a few labels', () => {
    const table =
      'Umsatz 2023 2024\nQ1 12.500,00 13.750,50\nQ2 11.020,10 14.001,99\nQ3 9.870,00 15.200,00\nSumme 33.390,10 ' +
      '42.952,49';
    expect(scoreTextLayer(table).usable).to.equal(true);
  });

  it('refuses long runs of symbol noise that contain no words', () => {
    const noise = '#### ~~~~ |||| ^^^^ ==== ++++ <<<< >>>> #### ~~~~ |||| ^^^^';
    expect(scoreTextLayer(noise).usable).to.equal(false);
  });

  it('refuses Latin letters without vowels, the mark of a substituted encoding', () => {
    const shifted = 'Xkw qdb prst zxcv bnml kjhg fdsw qrtz vbnm xcvb lkjh gfds wrtz pklm nbvc'.repeat(2);
    expect(scoreTextLayer(shifted).usable).to.equal(false);
  });

  it('accepts Chinese and Japanese text, which has no spaces between words', () => {
    expect(scoreTextLayer('文档处理服务按页面提取文本内容并在需要时进行光学字符识别。').usable).to.equal(true);
    expect(
      scoreTextLayer('各 ページ の テキスト を 抽出 し 必要 に 応じ て 文字 認識 を 行い ます 。').usable,
    ).to.equal(true);
  });

  it('keeps the score within 0 and 1 for any input', () => {
    for (const text of [GERMAN.repeat(50), '\u0000'.repeat(100), 'a', '😀😀😀 😀😀😀 😀😀😀 😀😀😀 😀😀😀 😀😀😀']) {
      const { score } = scoreTextLayer(text);
      expect(score, text.slice(0, 20)).to.be.within(0, 1);
    }
  });
});

describe('nonSpaceChars', () => {
  it('counts the code points without whitespace as splitting into characters does (astral, lone surrogates, NEL)', () => {
    const samples = [
      '',
      '  \n\t\u00a0\u2003',
      'Grüße aus Köln',
      'emoji 😀 and 𝔸 math, private \u{F0001}',
      'lone \uD83D high and \uDE00 low surrogates',
      'NEL\u0085stays, VT\u000b and FF\u000c go',
      '中文 ภาษาไทย',
    ];
    for (const s of samples) {
      const chars = [...s].filter((c) => !/\s/u.test(c));
      expect(nonSpaceChars(s), JSON.stringify(s)).to.deep.equal({ chars: chars.join(''), n: chars.length });
    }
  });
});
