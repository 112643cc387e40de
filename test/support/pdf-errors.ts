import { expect } from 'chai';
import { PdfError } from '../../providers/pdf/errors';

/** Expects `work` to reject quickly (under 5 s) with a `PdfError` of this contract code and reason. */
export async function expectPdfError(work: Promise<unknown>, code: string, reason: string): Promise<void> {
  const t0 = Date.now();
  try {
    await work;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(PdfError);
    expect((err as PdfError).code).to.equal(code);
    expect((err as PdfError).reason).to.equal(reason);
    expect(Date.now() - t0, 'fails fast').to.be.lessThan(5000);
    return;
  }
  expect.fail(`expected PdfError ${code}/${reason}`);
}
