import { expect } from 'chai';
import { AppError } from '../../core/errors';
import { checkDuration, checkPixelBudget } from '../../core/jobs/input-budgets';
import type { MediaProbe } from '../../core/jobs/media-formats';
import { dpiWithin, parsePageSizes } from '../../providers/pdf/poppler';
import { splitByDpi } from '../../providers/pdf/render';

const thrown = (fn: () => void): AppError => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected an error');
};

describe('input budgets', () => {
  it('keeps 300 dpi for ordinary pages and shrinks oversized ones to fit the pixel budget', () => {
    const a4 = { width: 595, height: 842 };
    expect(dpiWithin(a4, 300, 100_000_000)).to.equal(300);
    const poster = { width: 5000, height: 5000 };
    const dpi = dpiWithin(poster, 300, 100_000_000);
    expect(dpi).to.equal(144);
    expect(((poster.width * dpi) / 72) * ((poster.height * dpi) / 72)).to.be.at.most(100_000_000);
    expect(dpiWithin({ width: 14_400, height: 14_400 }, 300, 1_000_000)).to.equal(5);
    expect(dpiWithin({ width: 1e9, height: 1e9 }, 300, 1_000_000), 'never below 1').to.equal(1);
    expect(dpiWithin(undefined, 300, 1_000_000), 'size unknown').to.equal(300);
  });

  it('reads page sizes from pdfinfo and cuts runs where the resolution changes', () => {
    const out =
      'Pages:           3\nPage    1 size:  612 x 792 pts (letter)\nPage    1 rot:   0\nPage    2 size:  5000 x 5000 ' +
      'pts\nPage    3 size:  595.28 x 841.89 pts (A4)\n';
    const sizes = parsePageSizes(out);
    expect(sizes.get(2)).to.deep.equal({ width: 5000, height: 5000 });
    expect(sizes.get(3)).to.deep.equal({ width: 595.28, height: 841.89 });
    expect(splitByDpi(1, 5, (p) => (p === 3 ? 100 : 300))).to.deep.equal([
      [1, 2, 300],
      [3, 3, 100],
      [4, 5, 300],
    ]);
  });

  it('refuses images past the pixel budget with 422 and the numbers', () => {
    expect(() => checkPixelBudget({ width: 10_000, height: 10_000 }, 100_000_000)).not.to.throw();
    const e = thrown(() => checkPixelBudget({ width: 20_000, height: 20_000 }, 100_000_000));
    expect(e.code).to.equal('UNPROCESSABLE_INPUT');
    expect(e.details).to.deep.equal({
      reason: 'image_too_large',
      width: 20_000,
      height: 20_000,
      pixels: 400_000_000,
      max_pixels: 100_000_000,
    });
  });

  it('refuses recordings whose header states more than MAX_MEDIA_SECONDS', () => {
    const probe = (duration: number | null, video: number | null = null) =>
      ({
        formatNames: ['wav'],
        brand: null,
        duration,
        audio: null,
        video: video === null ? null : { index: 0, codec: 'h264', width: 1, height: 1, fps: 25, duration: video },
      }) as MediaProbe;
    expect(() => checkDuration(probe(43_200), 43_200)).not.to.throw();
    expect(() => checkDuration(probe(null), 43_200), 'unknown duration: decoding is capped instead').not.to.throw();
    expect(thrown(() => checkDuration(probe(43_201), 43_200)).details).to.include({
      reason: 'too_long',
      max_seconds: 43_200,
    });
    expect(
      thrown(() => checkDuration(probe(10, 50_000), 43_200)).code,
      'a stream longer than the container says',
    ).to.equal('UNPROCESSABLE_INPUT');
  });
});
