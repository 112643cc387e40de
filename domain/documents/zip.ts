/**
 * Bounded reading of a zip container (DOCX, PPTX, XLSX, ODF, EPUB) from memory, for the document readers.
 *
 * A zip's headers are the attacker's to write, so the budgets (`ReadLimits`) are enforced on the bytes actually
 * inflated: the total across every entry read, and each entry's ratio of inflated to compressed bytes. The declared
 * sizes only let us refuse earlier (an entry that says it is larger than what is left of the budget is refused before
 * a byte of it is inflated). yauzl also checks the inflated size against the declared one (`validateEntrySizes`).
 */
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';
import { DocumentError, type ReadLimits } from './model';

/** Ratios are checked once an entry has inflated this much: small XML parts legitimately compress 50-500:1. */
const RATIO_GRACE_BYTES = 1024 * 1024;

export interface ZipArchive {
  /** Entry names (directories excluded), in the zip's order. */
  readonly names: readonly string[];
  has(name: string): boolean;
  /** The entry's bytes; `undefined` when there is no such entry. Counts against the archive's budget. */
  read(name: string): Promise<Buffer | undefined>;
  /** The entry as UTF-8 text (a BOM dropped); `undefined` when absent. */
  readText(name: string): Promise<string | undefined>;
  close(): void;
}

const corrupt = (message: string) => new DocumentError('UNPROCESSABLE_INPUT', 'corrupt', message);

/** yauzl's errors are a corrupt container; ours (budgets) pass through. */
function asDocumentError(err: unknown): DocumentError {
  if (err instanceof DocumentError) return err;
  return corrupt(`The zip container is corrupt: ${err instanceof Error ? err.message : String(err)}`);
}

/** Opens the zip and lists its entries, refusing past `limits.maxEntries` (counted, not taken from the header). */
export async function openZip(bytes: Uint8Array, limits: ReadLimits): Promise<ZipArchive> {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (err, z) =>
        err ? reject(err) : resolve(z),
      ),
    );
  } catch (err) {
    throw asDocumentError(err);
  }
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw tooManyEntries(limits);
  }
  const entries = new Map<string, yauzl.Entry>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entries.size >= limits.maxEntries) return reject(tooManyEntries(limits));
        if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    throw asDocumentError(err);
  }
  const budget = { used: 0 };
  const read = (name: string) => {
    const entry = entries.get(name) ?? findCaseInsensitive(entries, name);
    return entry ? readEntry(zip, entry, limits, budget) : Promise.resolve(undefined);
  };
  return {
    names: [...entries.keys()],
    has: (name) => entries.has(name) || findCaseInsensitive(entries, name) !== undefined,
    read,
    async readText(name) {
      const data = await read(name);
      if (!data) return undefined;
      const text = data.toString('utf8');
      return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    },
    close: () => zip.close(),
  };
}

/** Part names are case-insensitive in OPC (ECMA-376 part 2); some writers differ in case from their own rels. */
function findCaseInsensitive(entries: Map<string, yauzl.Entry>, name: string): yauzl.Entry | undefined {
  const lower = name.toLowerCase();
  for (const [key, entry] of entries) if (key.toLowerCase() === lower) return entry;
  return undefined;
}

function tooManyEntries(limits: ReadLimits) {
  return new DocumentError(
    'PAYLOAD_TOO_LARGE',
    'too_many_entries',
    `The container lists more than ${limits.maxEntries} entries.`,
  );
}

function expansionTooLarge(limits: ReadLimits) {
  return new DocumentError(
    'PAYLOAD_TOO_LARGE',
    'expansion_too_large',
    `The container expands past ${limits.maxUncompressedBytes} bytes.`,
  );
}

async function readEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  limits: ReadLimits,
  budget: { used: number },
): Promise<Buffer> {
  // Bit 0 of the general purpose flag: the entry is encrypted (ZipCrypto or AES); we hold no password.
  if (entry.generalPurposeBitFlag & 1)
    throw new DocumentError('UNPROCESSABLE_INPUT', 'encrypted', `The entry ${entry.fileName} is encrypted.`);
  if (budget.used + entry.uncompressedSize > limits.maxUncompressedBytes) throw expansionTooLarge(limits);
  let stream: Readable;
  try {
    stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
    );
  } catch (err) {
    throw asDocumentError(err);
  }
  const chunks: Buffer[] = [];
  let inflated = 0;
  const maxForRatio = Math.max(entry.compressedSize, 1) * limits.maxCompressionRatio;
  return new Promise<Buffer>((resolve, reject) => {
    const fail = (err: DocumentError) => {
      stream.destroy();
      reject(err);
    };
    stream.on('data', (chunk: Buffer) => {
      inflated += chunk.length;
      budget.used += chunk.length;
      if (budget.used > limits.maxUncompressedBytes) return fail(expansionTooLarge(limits));
      if (inflated > RATIO_GRACE_BYTES && inflated > maxForRatio)
        return fail(
          new DocumentError(
            'PAYLOAD_TOO_LARGE',
            'compression_ratio',
            `The entry ${entry.fileName} inflates more than ${limits.maxCompressionRatio} times its compressed size.`,
          ),
        );
      chunks.push(chunk);
    });
    stream.on('error', (err) => reject(asDocumentError(err)));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** Resolves a relationship target against the part that names it (`word/document.xml` + `media/a.png`). */
export function resolvePartPath(fromPart: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const base = fromPart.includes('/') ? fromPart.slice(0, fromPart.lastIndexOf('/')).split('/') : [];
  for (const piece of decodeTarget(target).split('/')) {
    if (piece === '..') base.pop();
    else if (piece !== '.' && piece !== '') base.push(piece);
  }
  return base.join('/');
}

function decodeTarget(target: string): string {
  const path = target.split('#')[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
