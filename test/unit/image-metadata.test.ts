import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pngChunk } from '../support/documents/png';
import { AppError } from '../../core/errors';
import { rejection } from '../support/assert';
import { DEFAULT_DPI, imageMetadata, SUPPORTED_IMAGE_FORMATS } from '../../providers/image/metadata';

const run = promisify(execFile);

/** The PNG's chunks as [type, whole chunk bytes]. */
function pngChunks(png: Buffer): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  for (let off = 8; off < png.length;) {
    const len = png.readUInt32BE(off);
    out.push([png.toString('latin1', off + 4, off + 8), png.subarray(off, off + 12 + len)]);
    off += 12 + len;
  }
  return out;
}

/** The PNG without its pHYs chunk, plus a new one after IHDR when `phys` is given. */
function withPhys(png: Buffer, phys?: { perUnit: number; unit: number }): Buffer {
  const parts = [png.subarray(0, 8)];
  for (const [type, bytes] of pngChunks(png)) {
    if (type === 'pHYs') continue;
    parts.push(bytes);
    if (type === 'IHDR' && phys) {
      const data = Buffer.alloc(9);
      data.writeUInt32BE(phys.perUnit, 0);
      data.writeUInt32BE(phys.perUnit, 4);
      data[8] = phys.unit;
      parts.push(pngChunk('pHYs', data));
    }
  }
  return Buffer.concat(parts);
}

/** Sets the JFIF APP0 density of a JPEG whose APP0 comes right after SOI (as ffmpeg writes it). */
function withJfif(jpg: Buffer, units: number, density: number): Buffer {
  const out = Buffer.from(jpg);
  expect(out.toString('latin1', 6, 11)).to.equal('JFIF\0');
  out[13] = units;
  out.writeUInt16BE(density, 14);
  out.writeUInt16BE(density, 16);
  return out;
}

/** A big-endian TIFF header with IFD0 holding XResolution = num/den and ResolutionUnit = unit. */
function tiffResolution(num: number, den: number, unit: number): Buffer {
  const b = Buffer.alloc(8 + 2 + 2 * 12 + 4 + 8);
  b.write('MM', 0, 'latin1');
  b.writeUInt16BE(42, 2);
  b.writeUInt32BE(8, 4);
  b.writeUInt16BE(2, 8);
  const rational = 8 + 2 + 24 + 4;
  b.writeUInt16BE(282, 10); // XResolution, RATIONAL, 1, offset
  b.writeUInt16BE(5, 12);
  b.writeUInt32BE(1, 14);
  b.writeUInt32BE(rational, 18);
  b.writeUInt16BE(296, 22); // ResolutionUnit, SHORT, 1, value
  b.writeUInt16BE(3, 24);
  b.writeUInt32BE(1, 26);
  b.writeUInt16BE(unit, 30);
  b.writeUInt32BE(num, rational);
  b.writeUInt32BE(den, rational + 4);
  return b;
}

/** The JPEG with an EXIF APP1 segment inserted after its APP0. */
function withExif(jpg: Buffer, tiff: Buffer): Buffer {
  const app0End = 4 + jpg.readUInt16BE(4);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const head = Buffer.from([0xff, 0xe1, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpg.subarray(0, app0End), head, payload, jpg.subarray(app0End)]);
}

function riffChunk(id: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** An extended (VP8X) WebP wrapping a simple one's VP8 chunk, with an EXIF chunk. */
function webpWithExif(webp: Buffer, width: number, height: number, tiff: Buffer): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x[0] = 0x08; // EXIF present
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    riffChunk('VP8X', vp8x),
    webp.subarray(12),
    riffChunk('EXIF', tiff),
  ]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

describe('image metadata', function () {
  this.timeout(30_000);
  let dir: string;
  const files: Record<string, Buffer> = {};
  let webpAvailable = true;

  const ffmpeg = async (name: string, ...extra: string[]) => {
    const file = path.join(dir, name);
    const args = ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x48', '-frames:v', '1', ...extra, '-y', file];
    await run('ffmpeg', args, { timeout: 20_000 });
    files[name] = fs.readFileSync(file);
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-metadata-'));
    await Promise.all([
      ffmpeg('plain.png'),
      ffmpeg('dpi300.png', '-dpi', '300'),
      ffmpeg('plain.jpg'),
      ffmpeg('plain.gif'),
      ffmpeg('plain.bmp'),
      ffmpeg('plain.tiff'),
      ffmpeg('dpi150.tiff', '-dpi', '150'),
    ]);
    await ffmpeg('plain.webp', '-c:v', 'libwebp').catch(() => {
      webpAvailable = false;
    });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads the size and format of a PNG without a pHYs chunk, whose dpi is then unknown', async () => {
    const png = withPhys(files['plain.png']);
    expect(pngChunks(png).map(([t]) => t)).to.not.include('pHYs');
    expect(await imageMetadata(png)).to.deep.equal({ width: 64, height: 48, format: 'png', dpi: null });
    expect(DEFAULT_DPI).to.equal(72);
  });

  it('treats a pHYs chunk that gives only the aspect ratio (unit 0, as ffmpeg writes by default) as no dpi', async () => {
    expect(pngChunks(files['plain.png']).find(([t]) => t === 'pHYs')?.[1][16]).to.equal(0);
    expect((await imageMetadata(files['plain.png'])).dpi).to.equal(null);
  });

  it('converts a hand-written pHYs chunk in pixels per metre to dots per inch', async () => {
    const png = withPhys(files['plain.png'], { perUnit: 11811, unit: 1 });
    // The CRC is right: the file is byte for byte what ffmpeg writes when asked for 300 dpi.
    expect(png.equals(files['dpi300.png'])).to.equal(true);
    expect(await imageMetadata(png)).to.deep.equal({ width: 64, height: 48, format: 'png', dpi: 300 });
    expect((await imageMetadata(withPhys(files['plain.png'], { perUnit: 3780, unit: 1 }))).dpi).to.equal(96);
  });

  it('reads the JFIF density of a JPEG in dots per inch or per centimetre, and none for aspect-only units', async () => {
    const jpg = files['plain.jpg'];
    expect(await imageMetadata(jpg)).to.deep.equal({ width: 64, height: 48, format: 'jpeg', dpi: null });
    expect((await imageMetadata(withJfif(jpg, 1, 300))).dpi).to.equal(300);
    expect((await imageMetadata(withJfif(jpg, 2, 118))).dpi).to.equal(300);
    expect((await imageMetadata(withJfif(jpg, 0, 300))).dpi).to.equal(null);
  });

  it('falls back to the EXIF XResolution of a JPEG when JFIF gives no unit, and prefers JFIF when it does', async () => {
    const exif240 = withExif(withJfif(files['plain.jpg'], 0, 1), tiffResolution(480, 2, 2));
    expect(await imageMetadata(exif240)).to.deep.equal({ width: 64, height: 48, format: 'jpeg', dpi: 240 });
    expect((await imageMetadata(withExif(withJfif(files['plain.jpg'], 0, 1), tiffResolution(100, 1, 3)))).dpi).to.equal(
      254,
    );
    expect((await imageMetadata(withExif(withJfif(files['plain.jpg'], 0, 1), tiffResolution(300, 1, 1)))).dpi).to.equal(
      null,
    );
    expect(
      (await imageMetadata(withExif(withJfif(files['plain.jpg'], 1, 150), tiffResolution(72, 1, 2)))).dpi,
    ).to.equal(150);
  });

  it('reads a GIF, which has no resolution', async () => {
    expect(await imageMetadata(files['plain.gif'])).to.deep.equal({ width: 64, height: 48, format: 'gif', dpi: null });
  });

  it('reads the XResolution of a TIFF', async () => {
    expect(await imageMetadata(files['plain.tiff'])).to.deep.equal({ width: 64, height: 48, format: 'tiff', dpi: 72 });
    expect((await imageMetadata(files['dpi150.tiff'])).dpi).to.equal(150);
  });

  it('reads a BMP and its pixels-per-metre field when set', async () => {
    expect(await imageMetadata(files['plain.bmp'])).to.deep.equal({ width: 64, height: 48, format: 'bmp', dpi: null });
    const bmp = Buffer.from(files['plain.bmp']);
    bmp.writeInt32LE(3780, 38);
    bmp.writeInt32LE(3780, 42);
    expect((await imageMetadata(bmp)).dpi).to.equal(96);
  });

  it('reads a WebP, and the resolution of an EXIF chunk in an extended WebP', async function () {
    if (!webpAvailable) this.skip();
    const webp = files['plain.webp'];
    expect(await imageMetadata(webp)).to.deep.equal({ width: 64, height: 48, format: 'webp', dpi: null });
    const extended = webpWithExif(webp, 64, 48, tiffResolution(300, 1, 2));
    expect(await imageMetadata(extended)).to.deep.equal({ width: 64, height: 48, format: 'webp', dpi: 300 });
  });

  it('reads a file given by its path, and answers FILE_NOT_FOUND for a missing one', async () => {
    expect(await imageMetadata(path.join(dir, 'dpi150.tiff'))).to.deep.equal({
      width: 64,
      height: 48,
      format: 'tiff',
      dpi: 150,
    });
    expect((await rejection(imageMetadata(path.join(dir, 'missing.png')))).code).to.equal('FILE_NOT_FOUND');
  });

  const bad: [string, () => Buffer][] = [
    ['random bytes', () => Buffer.concat([Buffer.from('XYZ'), Buffer.alloc(500, 0x5a)])],
    ['an empty file', () => Buffer.alloc(0)],
    ['a PNG cut off inside its header', () => files['plain.png'].subarray(0, 20)],
    ['a PDF', () => fs.readFileSync(path.resolve('samples/sample.pdf'))],
    [
      'an SVG (a format image-size knows but image OCR does not take)',
      () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'),
    ],
  ];
  for (const [what, bytes] of bad) {
    it(`refuses ${what} with INVALID_FORMAT listing the supported formats`, async () => {
      const err = await rejection(imageMetadata(bytes()));
      expect(err).to.be.instanceOf(AppError);
      expect(err.code).to.equal('INVALID_FORMAT');
      expect(err.status).to.equal(400);
      expect(err.details.supported_formats).to.deep.equal(['png', 'jpeg', 'gif', 'webp', 'tiff', 'bmp']);
      expect(err.details.supported_formats).to.deep.equal([...SUPPORTED_IMAGE_FORMATS]);
    });
  }
});
