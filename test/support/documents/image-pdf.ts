import { deflateSync } from 'node:zlib';

/**
 * A one-page PDF that paints one grey image XObject (`width` × `height`, every pixel `shade`, Flate-compressed: a
 * huge declared image costs a few bytes of stream) `draws` times: what a hostile document does to pdfimages.
 */
export function imagePdf(opts: { width: number; height: number; draws?: number; shade?: number }): Buffer {
  const { width, height, draws = 1, shade = 0 } = opts;
  const pixels = deflateSync(Buffer.alloc(width * height, shade), { level: 9 });
  const content = Array.from(
    { length: draws },
    (_, i) => `q 4 0 0 4 ${(i % 100) * 5} ${Math.floor(i / 100) * 5} cm /Im0 Do Q`,
  ).join('\n');
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>',
    ),
    Buffer.concat([Buffer.from(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`)]),
    Buffer.concat([
      Buffer.from(
        `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${pixels.length} >>\nstream\n`,
      ),
      pixels,
      Buffer.from('\nendstream'),
    ]),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let at = parts[0].length;
  objects.forEach((body, i) => {
    offsets.push(at);
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(obj);
    at += obj.length;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R >>`,
    'startxref',
    String(at),
    '%%EOF',
  ].join('\n');
  parts.push(Buffer.from(`${xref}\n`));
  return Buffer.concat(parts);
}
