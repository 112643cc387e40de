import { expect } from 'chai';
import { Readable } from 'node:stream';
import yazl from 'yazl';
import { DEFAULT_READ_LIMITS, DocumentError } from '../../domain/documents/model';
import { openZip, resolvePartPath } from '../../domain/documents/zip';
import { zipOf } from '../support/documents/office-files';

/** A zip with one entry of `size` zero bytes, streamed into yazl so the test never holds the inflated bytes. */
function zerosZip(size: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  let left = size;
  const block = Buffer.alloc(1024 * 1024);
  const zeros = new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, block.length);
      left -= n;
      this.push(block.subarray(0, n));
    },
  });
  zip.addReadStream(zeros, 'word/document.xml');
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

async function refusal(p: Promise<unknown>): Promise<DocumentError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a DocumentError').to.be.instanceOf(DocumentError);
  return err as DocumentError;
}

describe('bounded zip reading', () => {
  it('lists entries and reads one by name, case-insensitively as OPC part names are', async () => {
    const zip = await openZip(await zipOf({ 'a/B.xml': '<x/>', 'c.txt': '\ufeffhello' }), DEFAULT_READ_LIMITS);
    expect(zip.names).to.deep.equal(['a/B.xml', 'c.txt']);
    expect(await zip.readText('a/b.xml')).to.equal('<x/>');
    expect(await zip.readText('c.txt')).to.equal('hello');
    expect(await zip.read('missing')).to.equal(undefined);
    zip.close();
  });

  it('refuses a 200 MB zip bomb by its ratio, fast and without inflating all of it', async function () {
    this.timeout(120_000);
    const bomb = await zerosZip(200 * 1024 * 1024);
    expect(bomb.length).to.be.below(400_000);
    const zip = await openZip(bomb, DEFAULT_READ_LIMITS);
    const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    const started = Date.now();
    const err = await refusal(zip.read('word/document.xml'));
    const elapsed = Date.now() - started;
    const grown = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore;
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', reason: 'compression_ratio' });
    expect(elapsed).to.be.below(2000);
    // At most ratio × compressed size (~40 MB here) is inflated before the refusal, never the 200 MB.
    expect(grown).to.be.below(120 * 1024 * 1024);
  });

  it('refuses past the total of inflated bytes, counted across entries', async () => {
    const data = Buffer.from(
      Array.from({ length: 6000 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 90))).join(''),
    );
    const zip = await openZip(await zipOf({ 'one.xml': data, 'two.xml': data }), {
      ...DEFAULT_READ_LIMITS,
      maxUncompressedBytes: 10_000,
    });
    expect((await zip.read('one.xml'))?.length).to.equal(6000);
    const err = await refusal(zip.read('two.xml'));
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', reason: 'expansion_too_large' });
  });

  it('refuses more entries than the limit', async () => {
    const entries = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, 'x']));
    const err = await refusal(openZip(await zipOf(entries), { ...DEFAULT_READ_LIMITS, maxEntries: 10 }));
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', reason: 'too_many_entries' });
  });

  it('answers corrupt for a truncated zip and for bytes that are no zip', async () => {
    const good = await zipOf({ 'a.xml': '<a>' + 'text '.repeat(1000) + '</a>' });
    expect(await refusal(openZip(good.subarray(0, good.length - 30), DEFAULT_READ_LIMITS))).to.include({
      reason: 'corrupt',
    });
    expect(await refusal(openZip(Buffer.from('PK not really'), DEFAULT_READ_LIMITS))).to.include({
      code: 'UNPROCESSABLE_INPUT',
      reason: 'corrupt',
    });
    // Damaged deflate data inside an intact directory: corrupt when the entry is read.
    const damaged = Buffer.from(good);
    for (let i = 40; i < 80; i++) damaged[i] ^= 0xff;
    const zip = await openZip(damaged, DEFAULT_READ_LIMITS).catch((e: unknown) => e);
    if (zip instanceof DocumentError) expect(zip.reason).to.equal('corrupt');
    else
      expect(await refusal((zip as Awaited<ReturnType<typeof openZip>>).read('a.xml'))).to.include({
        reason: 'corrupt',
      });
  });

  it('answers encrypted for an entry with the encryption flag', async () => {
    const zip = Buffer.from(await zipOf({ 'a.xml': '<a/>' }));
    // Set bit 0 of the general purpose flag in the local header (offset 6) and the central directory (offset 8).
    zip.writeUInt16LE(zip.readUInt16LE(6) | 1, 6);
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt16LE(zip.readUInt16LE(central + 8) | 1, central + 8);
    const archive = await openZip(zip, DEFAULT_READ_LIMITS);
    expect(await refusal(archive.read('a.xml'))).to.include({ code: 'UNPROCESSABLE_INPUT', reason: 'encrypted' });
  });

  it('resolves relationship targets against their part', () => {
    expect(resolvePartPath('word/document.xml', 'media/image1.png')).to.equal('word/media/image1.png');
    expect(resolvePartPath('ppt/slides/slide1.xml', '../media/a%20b.png')).to.equal('ppt/media/a b.png');
    expect(resolvePartPath('ppt/presentation.xml', '/ppt/slides/slide2.xml')).to.equal('ppt/slides/slide2.xml');
  });
});
