import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { newJobId } from '../../core/jobs/ids';
import { jobOutputKey, jobResultsKey } from '../../core/stores/records';
import { writeBlobJson } from '../../core/stores/blob-store';
import { activityHarness } from '../support/workflows/activity-harness';

/** Peak heap plus buffers above where they were while `work` runs (sampled every 10 ms), in MiB. */
async function peakMiB<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  global.gc?.();
  const base = process.memoryUsage();
  let peak = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
  };
  const timer = setInterval(sample, 10);
  try {
    const value = await work();
    sample();
    return { value, peak: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

// The spec's `images_archive_data` is the images ZIP in Base64 inside the result: built in memory, a 300 MB archive
// cost the worker the archive, its Base64 and a JSON text holding it (about 1.5 GB). It is streamed now.
describe('the images archive in a PDF result', function () {
  this.timeout(120_000);

  it('streams a 48 MiB archive into images_archive_data as Base64 without holding it in memory', async () => {
    const h = await activityHarness();
    try {
      const jobId = newJobId();
      const archive = randomBytes(48 * 1024 * 1024);
      await h.store.put(jobOutputKey(jobId, 'images.zip'), archive, { mime: 'application/zip' });
      const contentsKey = `jobs/${jobId}/internal/contents.json`;
      await writeBlobJson(h.store, contentsKey, [{ page: 1, text: 'Eine Seite mit Bildern.', method: 'native' }]);
      const input = {
        jobId,
        parameters: { extraction_method: 'native' as const, includeImages: true },
        meta: { pageCount: 1, title: '', author: '', pages: [1] },
        images: { archive: 'images.zip', image_paths: ['page-0001.png'] },
        llm: [],
        contentsKey,
      };
      const { peak } = await peakMiB(() => h.run(h.activities.finishPdf, [input as never]));
      const stored = await h.store.get(jobResultsKey(jobId));
      const chunks: Buffer[] = [];
      for await (const c of stored) chunks.push(c as Buffer);
      const data = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      expect(data.images_archive_filename).to.equal(`${jobId}-images.zip`);
      expect(Buffer.from(String(data.images_archive_data), 'base64').equals(archive)).to.equal(true);
      expect(data.extracted_text).to.include('Eine Seite mit Bildern.');
      // In memory: 48 MiB of archive, 64 MiB of Base64 and a JSON text of 64 MiB more (measured: 236 MiB); streamed:
      // a few chunks at a time, plus the garbage the collector has not taken yet (measured: about 40 MiB).
      expect(peak, 'MiB of heap and buffers above the start').to.be.below(90);
    } finally {
      await h.remove();
    }
  });

  it('encodes any length the same as Buffer#toString (chunks cut at multiples of three bytes)', async () => {
    const { base64Of } = await import('../../core/results/json-base64');
    for (const n of [0, 1, 2, 3, 4, 65_537, 200_000]) {
      const bytes = randomBytes(n);
      const pieces = [bytes.subarray(0, n / 3), bytes.subarray(n / 3, n / 2), bytes.subarray(n / 2)];
      const out: Buffer[] = [];
      for await (const c of base64Of(pieces)) out.push(c);
      expect(Buffer.concat(out).toString('latin1'), `${n} bytes`).to.equal(bytes.toString('base64'));
    }
  });
});
