import { expect } from 'chai';
import {
  MIN_CHARS,
  nonSpaceChars,
  scoreTextLayer,
  TEXT_LAYER_PATTERNS,
  USABLE_SCORE,
} from '../../domain/pdf/text-layer';

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

describe('text layer score, counted once per distinct character and token', () => {
  // The score written plainly, as the patterns say it (each pattern over every character or token): the fast counting
  // (one pass, the patterns once per distinct code point, token kinds remembered) must give exactly this.
  const {
    BAD_CHAR,
    GOOD_CHAR,
    WORD,
    NUMBER,
    CJK,
    SINGLE_LETTER: SINGLE,
    LATIN_LETTER,
    LATIN_VOWEL,
  } = TEXT_LAYER_PATTERNS;
  const clamp = (x: number) => Math.max(0, Math.min(1, x));
  function plainScore(text: string, hint?: { width: number; height: number }): number {
    const chars = [...text].filter((c) => !/\s/u.test(c));
    const n = chars.length;
    if (n === 0) return 0;
    const area = hint && hint.width > 0 && hint.height > 0 ? hint.width * hint.height : 595 * 842;
    const minChars = Math.max(5, Math.round(20 * Math.min(1, area / (595 * 842))));
    const cleanliness = clamp(1 - 5 * (chars.filter((c) => BAD_CHAR.test(c)).length / n));
    const symbols = clamp((chars.filter((c) => GOOD_CHAR.test(c)).length / n - 0.5) / 0.4);
    const tokens = text.split(/\s+/u).filter(Boolean);
    const words = clamp(
      tokens.filter((t) => WORD.test(t) || NUMBER.test(t) || CJK.test(t)).length / tokens.length / 0.6,
    );
    const singles = tokens.filter((t) => SINGLE.test(t) && !CJK.test(t)).length / tokens.length;
    const torn = singles > 0.3 ? clamp(1 - (singles - 0.3) * 2.5) : 1;
    const latin = chars.filter((c) => LATIN_LETTER.test(c));
    const share = latin.length ? latin.filter((c) => LATIN_VOWEL.test(c)).length / latin.length : 0.4;
    const vowels = latin.length >= 40 && share < 0.12 ? share / 0.12 : 1;
    return Math.round(Math.min(1, n / minChars) * cleanliness * symbols * words * torn * vowels * 1000) / 1000;
  }

  it('gives the plainly counted score on 3,000 random texts (astral, lone surrogates, Unicode spaces, CJK, noise)', () => {
    const pools = [
      'abcdefghijklmnopqrstuvwxyz',
      'AEIOUYaeiouyäöüÄÖÜàéèÿŸıİſ',
      'bcdfghjklmnpqrstvwxz',
      '0123456789.,:;!?-–—()[]"\'’$€%+=<>|~^`',
      ' \t\n\u00a0\u2003\u200b',
      '\uFFFD\uE000\u0001\u007f\u0085',
      'αβγдєж漢字ひらカナ한글ไทย',
      '\u{1F600}\u{10000}\u{F0000}\u{1D400}',
      '\uD800\uDC00\uDFFF\uD834',
    ].map((p) => [...p]);
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let i = 0; i < 3000; i++) {
      const mix = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pools[Math.floor(rnd() * pools.length)]);
      let text = '';
      for (let k = Math.floor(rnd() * 200); k > 0; k--) {
        const pool = mix[Math.floor(rnd() * mix.length)];
        text += rnd() < 0.15 ? ' ' : pool[Math.floor(rnd() * pool.length)];
      }
      const hint = rnd() < 0.5 ? { width: 100 + rnd() * 500, height: 100 + rnd() * 700 } : undefined;
      expect(scoreTextLayer(text, hint).score, JSON.stringify(text)).to.equal(plainScore(text, hint));
    }
  });
});
