import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'chai';
import { newJobId } from '../../core/jobs/ids';
import {
  ARCHIVE_DATA_FIELDS,
  parseJsonWithout,
  putJsonWithBase64,
  readJsonWithout,
} from '../../core/results/json-base64';
import { jobOutputKey, jobResultsKey } from '../../core/stores/records';
import { activityHarness } from '../support/workflows/activity-harness';

/**
 * V8's collector, exposed at run time when node was started without `--expose-gc` (as mocha is). The peak is taken
 * over live memory: a full collection before each sample frees the chunks the stream has dropped, which a busy
 * process would otherwise count as held; a reader that keeps the Base64 keeps it past any collection. Samples are
 * 250 ms apart (a collection of the whole suite's heap takes a while) and stop after 50 s whatever happens, so a
 * test that timed out leaves no collector running behind it.
 */
const gc: () => void =
  (global.gc as (() => void) | undefined) ?? (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc'));

/** Peak heap plus buffers above where they were while `work` runs (sampled every 250 ms, live memory only), in MiB. */
async function peakMiB<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  gc();
  const base = process.memoryUsage();
  const started = Date.now();
  let peak = 0;
  const sample = () => {
    if (Date.now() - started > 50_000) return clearInterval(timer);
    gc();
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
  };
  const timer = setInterval(sample, 250);
  try {
    const value = await work();
    sample();
    return { value, peak: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

/** A results record (as `putJsonWithBase64` writes it) whose archive Base64 is `mib` MiB, made piece by piece. */
async function* record(mib: number): AsyncGenerator<Buffer> {
  yield Buffer.from('{"extracted_text":"Seite \\"1\\" — images_archive_data: \\u00e9","images_archive_data":"');
  const piece = Buffer.from('QUJD'.repeat(16 * 1024)); // 64 KiB of Base64
  for (let i = 0; i < mib * 16; i++) yield piece;
  yield Buffer.from(
    '","images_archive_filename":"x-images.zip","pages":[1,2.5,true,null,{"images_archive_data":"kept"}]}',
  );
}

// The images archive's Base64 sits in the results record (core/results/json-base64.ts `putJsonWithBase64`, streamed in). A
// reader that wants the rest of the record (a session's attachment text) parsed all of it: the archive's Base64
// once as the blob's text and once as a string (a 300 MB archive: about 800 MB). It is read past now.
describe('reading a results record past its archive Base64', function () {
  this.timeout(120_000);

  it('answers the record with the archive fields null, whatever pieces it comes in', async () => {
    const value = {
      a: 'x"y\\ é 😀 \u2028',
      images_archive_data: 'QUJD'.repeat(1000),
      nested: { images_archive_data: 'kept below the top level', n: [-1.5e3, 0, true, false, null, [], {}] },
      note: 'a string that says "images_archive_data":"…" is text',
      pages_archive_data: '',
      empty: '',
    };
    const text = Buffer.from(JSON.stringify(value));
    const expected = { ...value, images_archive_data: null, pages_archive_data: null };
    for (const size of [1, 2, 3, 7, 64, text.length]) {
      const pieces = async function* () {
        for (let i = 0; i < text.length; i += size) yield text.subarray(i, i + size);
      };
      const r = await parseJsonWithout(pieces(), ARCHIVE_DATA_FIELDS);
      expect(r.value, `pieces of ${size} bytes`).to.deep.equal(expected);
      expect(r.skipped).to.deep.equal({ images_archive_data: 4000, pages_archive_data: 0 });
    }
    await parseJsonWithout([Buffer.from('[1]')], ARCHIVE_DATA_FIELDS).then(
      () => expect.fail('an array is no record'),
      (e: Error) => expect(e.message).to.match(/not a JSON object/),
    );
  });

  it('reads a record with 96 MiB of archive Base64 in bounded memory', async () => {
    const { value, peak } = await peakMiB(() => parseJsonWithout(record(96), ARCHIVE_DATA_FIELDS));
    expect(value.value.extracted_text).to.equal('Seite "1" — images_archive_data: é');
    expect(value.value.images_archive_data).to.equal(null);
    expect(value.value.images_archive_filename).to.equal('x-images.zip');
    expect(value.skipped.images_archive_data).to.equal(96 * 1024 * 1024);
    // Held whole, the Base64 alone is a 96 MiB string (and JSON.parse of the text holds it twice over).
    expect(peak, 'MiB of heap and buffers above the start').to.be.below(40);
  });

  it("a session's attachment text comes from a PDF job's record without its archive held", async () => {
    const h = await activityHarness();
    try {
      const pdfJobId = newJobId();
      await h.store.put(jobOutputKey(pdfJobId, 'images.zip'), Buffer.alloc(48 * 1024 * 1024, 7), {
        mime: 'application/zip',
      });
      const data = { extracted_text: 'Der Text des Anhangs.', images_archive_data: null };
      await putJsonWithBase64(
        h.store,
        jobResultsKey(pdfJobId),
        data,
        'images_archive_data',
        jobOutputKey(pdfJobId, 'images.zip'),
      );
      const read = await peakMiB(() => readJsonWithout(h.store, jobResultsKey(pdfJobId), ARCHIVE_DATA_FIELDS));
      expect(read.value).to.deep.equal(data);
      expect(read.peak, 'MiB above the start reading a record with 64 MiB of Base64').to.be.below(40);
      const jobId = newJobId();
      const files = [{ name: 'anhang', url: 'https://example.org/a.pdf', key: 'k', sha256: 's', pdfJobId }];
      await h.run(h.activities.collectSessionAttachments, [{ jobId, files }] as never);
      const { sessionTextKey, SESSION_STEP } = await import('../../activities/session-types');
      const chunks: Buffer[] = [];
      for await (const c of await h.store.get(sessionTextKey(jobId, SESSION_STEP.attachmentsText))) chunks.push(c);
      expect(Buffer.concat(chunks).toString('utf8')).to.equal('### anhang\n\nDer Text des Anhangs.');
    } finally {
      await h.remove();
    }
  });
});
