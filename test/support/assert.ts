import { expect } from 'chai';
import { AppError } from '../../core/errors';
import { PdfError } from '../../domain/pdf/errors';

/** The error `work` rejects with; fails the test when it resolves. `E` names what the caller expects (check it). */
export async function rejection<E = AppError>(work: Promise<unknown>): Promise<E> {
  try {
    await work;
  } catch (err) {
    return err as E;
  }
  expect.fail('expected a rejection');
}

/** The AppError `work` throws (a refused request, checked without HTTP); fails the test when it returns. */
export function refusal(work: () => unknown): AppError {
  try {
    work();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  expect.fail('expected a refusal');
}

/** Expects `work` to reject quickly (under 5 s) with a `PdfError` of this contract code and reason. */
export async function expectPdfError(work: Promise<unknown>, code: string, reason: string): Promise<void> {
  const t0 = Date.now();
  const err = await rejection<PdfError>(work);
  expect(err, String(err)).to.be.instanceOf(PdfError);
  expect(err.code).to.equal(code);
  expect(err.reason).to.equal(reason);
  expect(Date.now() - t0, 'fails fast').to.be.lessThan(5000);
}
