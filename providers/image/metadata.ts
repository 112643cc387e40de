import fs from 'node:fs/promises';
import { imageSize } from 'image-size';
import { AppError } from '../../core/errors';

/**
 * Image metadata for `/api/imageocr` (spec §4.10): size and format from the headers via image-size, resolution
 * from the format's own resolution fields. No pixel is decoded, so this is cheap on any image size.
 */

/** What the API reports when an image carries no resolution (the conventional screen value). */
export const DEFAULT_DPI = 72;

/** Formats accepted for image OCR, as reported in `metadata.format` and in `INVALID_FORMAT` details. */
export const SUPPORTED_IMAGE_FORMATS = ['png', 'jpeg', 'gif', 'webp', 'tiff', 'bmp'] as const;
export type ImageFormat = (typeof SUPPORTED_IMAGE_FORMATS)[number];

export interface ImageMetadata {
  width: number;
  height: number;
  format: ImageFormat;
  /** Horizontal resolution in dots per inch, rounded; null when the file does not say. */
  dpi: number | null;
}

const FORMAT_OF: Record<string, ImageFormat> = {
  png: 'png',
  jpg: 'jpeg',
  gif: 'gif',
  webp: 'webp',
  tiff: 'tiff',
  bmp: 'bmp',
};
const METRE_PER_INCH = 0.0254;
const CM_PER_INCH = 2.54;

function invalid(errorType: 'unsupported_format' | 'corrupt_image', message: string, detected?: string): AppError {
  return new AppError('INVALID_FORMAT', message, {
    error_type: errorType,
    supported_formats: [...SUPPORTED_IMAGE_FORMATS],
    ...(detected ? { detected_format: detected } : {}),
  });
}

/** The metadata from the first `maxBytes` of a file, or null when they do not tell (the header lies further in). */
export async function imageHeaderMetadata(file: string, maxBytes = 1024 * 1024): Promise<ImageMetadata | null> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(maxBytes);
    const { bytesRead } = await fh.read(buf, 0, maxBytes, 0);
    return readImageMetadata(Buffer.from(buf.subarray(0, bytesRead)));
  } catch (err) {
    if (err instanceof AppError) return null;
    throw err;
  } finally {
    await fh.close();
  }
}

/** Reads the metadata of an image given as bytes or a file path; throws `INVALID_FORMAT` for anything else. */
export async function imageMetadata(input: Buffer | string): Promise<ImageMetadata> {
  if (typeof input !== 'string') return readImageMetadata(input);
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(input);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new AppError('FILE_NOT_FOUND', 'The image file does not exist');
    throw err;
  }
  return readImageMetadata(bytes);
}

/** The synchronous core of {@link imageMetadata}, for bytes already in memory. */
export function readImageMetadata(input: Uint8Array): ImageMetadata {
  const bytes = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  let size: { width: number; height: number; type?: string };
  try {
    // image-size reads through DataViews over the whole underlying ArrayBuffer, so a view into a larger buffer
    // (a pooled or sliced Buffer) would let it read past the image's end: give it bytes that own their buffer.
    const owned =
      bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength ? bytes : new Uint8Array(bytes);
    size = imageSize(owned);
  } catch {
    throw invalid('unsupported_format', 'The file is not an image in a supported format');
  }
  const format = size.type ? FORMAT_OF[size.type] : undefined;
  if (!format)
    throw invalid('unsupported_format', `Images of type ${size.type ?? 'unknown'} are not supported`, size.type);
  if (!(size.width > 0 && size.height > 0))
    throw invalid('corrupt_image', `The ${format} image has no valid dimensions`, format);
  let dpi: number | null = null;
  try {
    dpi = DPI_READERS[format](bytes);
  } catch {
    dpi = null; // a damaged resolution field is not worth refusing an image whose size could be read
  }
  return { width: size.width, height: size.height, format, dpi: dpi !== null && dpi > 0 ? dpi : null };
}

const DPI_READERS: Record<ImageFormat, (b: Buffer) => number | null> = {
  png: pngDpi,
  jpeg: jpegDpi,
  gif: () => null,
  webp: webpDpi,
  tiff: tiffDpi,
  bmp: bmpDpi,
};

/** PNG `pHYs` (pixels per unit; unit 1 = metre, 0 = aspect ratio only). It must come before the first `IDAT`. */
export function pngDpi(b: Buffer): number | null {
  for (let off = 8; off + 8 <= b.length;) {
    const len = b.readUInt32BE(off);
    const type = b.toString('latin1', off + 4, off + 8);
    if (type === 'pHYs') {
      if (len < 9 || off + 17 > b.length) return null;
      const perUnit = b.readUInt32BE(off + 8);
      return b[off + 16] === 1 && perUnit > 0 ? Math.round(perUnit * METRE_PER_INCH) : null;
    }
    if (type === 'IDAT' || type === 'IEND') return null;
    off += 12 + len;
  }
  return null;
}

/**
 * JPEG: the JFIF APP0 density (units 1 = per inch, 2 = per cm; 0 = aspect ratio only) when it gives one, else EXIF
 * (APP1) XResolution with ResolutionUnit. Only the segments before the first frame header are read.
 */
export function jpegDpi(b: Buffer): number | null {
  let jfif: number | null = null;
  let exif: number | null = null;
  for (let off = 2; off + 4 <= b.length;) {
    if (b[off] !== 0xff) break;
    const marker = b[off + 1];
    if (marker === 0xff) {
      off += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      off += 2; // markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) break;
    const seg = off + 4;
    const end = off + 2 + b.readUInt16BE(off + 2);
    if (end > b.length) break;
    if (marker === 0xe0 && end - seg >= 12 && b.toString('latin1', seg, seg + 5) === 'JFIF\0') {
      const units = b[seg + 7];
      const x = b.readUInt16BE(seg + 8);
      if (x > 0 && units === 1) jfif = x;
      else if (x > 0 && units === 2) jfif = Math.round(x * CM_PER_INCH);
    } else if (marker === 0xe1 && exif === null && b.toString('latin1', seg, seg + 6) === 'Exif\0\0') {
      exif = tiffDpi(b.subarray(seg + 6, end));
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) break; // SOFn
    off = end;
  }
  return jfif ?? exif;
}

/** TIFF (and EXIF, which is TIFF inside): IFD0 XResolution (282) with ResolutionUnit (296; 2 = inch, 3 = cm). */
export function tiffDpi(b: Buffer): number | null {
  if (b.length < 8) return null;
  const order = b.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return null;
  const le = order === 'II';
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  if (u16(2) !== 42) return null; // BigTIFF (43) is not read
  const ifd = u32(4);
  if (ifd + 2 > b.length) return null;
  let xres: number | undefined;
  let unit = 2;
  const entries = u16(ifd);
  for (let i = 0; i < entries; i++) {
    const e = ifd + 2 + 12 * i;
    if (e + 12 > b.length) break;
    const tag = u16(e);
    const type = u16(e + 2);
    if (tag === 282) {
      if (type === 5 || type === 10) {
        const at = u32(e + 8);
        if (at + 8 > b.length) continue;
        const num = u32(at);
        const den = u32(at + 4);
        if (den > 0) xres = num / den;
      } else if (type === 3) xres = u16(e + 8);
      else if (type === 4) xres = u32(e + 8);
    } else if (tag === 296 && type === 3) unit = u16(e + 8);
  }
  if (xres === undefined || !(xres > 0)) return null;
  if (unit === 2) return Math.round(xres);
  if (unit === 3) return Math.round(xres * CM_PER_INCH);
  return null; // unit 1: no absolute unit
}

/** WebP has no resolution field of its own; an `EXIF` chunk (extended format) may carry one. */
export function webpDpi(b: Buffer): number | null {
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return null;
  for (let off = 12; off + 8 <= b.length;) {
    const id = b.toString('latin1', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'EXIF') {
      let data = b.subarray(off + 8, Math.min(b.length, off + 8 + size));
      if (data.toString('latin1', 0, 6) === 'Exif\0\0') data = data.subarray(6);
      return tiffDpi(data);
    }
    off += 8 + size + (size % 2);
  }
  return null;
}

/** BMP `BITMAPINFOHEADER` (and later) horizontal pixels per metre; the old 12-byte core header has none. */
export function bmpDpi(b: Buffer): number | null {
  if (b.length < 42 || b.readUInt32LE(14) < 40) return null;
  const perMetre = b.readInt32LE(38);
  return perMetre > 0 ? Math.round(perMetre * METRE_PER_INCH) : null;
}
