/**
 * Real office documents, OpenDocument files, e-books, e-mails and HTML pages for bench/documents.bench.ts, none written
 * here: test files other projects ship in their registry packages, fetched once into the cache with the registries'
 * own clients and pinned by version (and by each file's sha256, which a run checks and reports).
 *
 * - Maven Central: Apache Tika 3.3.1's test jars (`mvn dependency:get …:jar:tests`), Apache-2.0; their test documents
 *   come from Tika's and POI's bug reports and the govdocs corpus.
 * - PyPI sdists (`pip download --no-binary`): python-docx 1.2.0 and python-pptx 1.0.2 (MIT), odfpy 1.4.1 (Apache-2.0 /
 *   GPL) with its own manual, xlsx2csv 0.8.4 (MIT).
 * - Debian (`apt-get download`, `dpkg-deb -x`): calibre's quick-start e-book (GPL), CPython's e-mail test messages
 *   (libpython3.11-testsuite, PSF), R's manuals as HTML (r-doc-html, GPL).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BENCH_DOCUMENTS_CACHE = path.join(
  process.env.DOCPROC_CACHE_DIR || path.join(os.homedir(), '.cache', 'docproc'),
  'bench-documents',
);

export type BenchFormat = 'docx' | 'pptx' | 'xlsx' | 'odt' | 'ods' | 'odp' | 'epub' | 'eml' | 'html';

type Source =
  | { kind: 'maven'; artifact: string }
  | { kind: 'pypi'; name: string; version: string; archive: string }
  | { kind: 'deb'; name: string; version: string };

export interface RealDocument {
  /** The file's name in the cache (`files/`), its extension the format's. */
  name: string;
  format: BenchFormat;
  /** The package and the path inside it. */
  source: Source;
  member: string;
  sha256: string;
}

const TIKA = (module: string): Source => ({
  kind: 'maven',
  artifact: `org.apache.tika:tika-parser-${module}-module:3.3.1:jar:tests`,
});
const MS = TIKA('microsoft');
const MISC = TIKA('miscoffice');
const MAIL = TIKA('mail');
const PYDOCX: Source = { kind: 'pypi', name: 'python-docx', version: '1.2.0', archive: 'python_docx-1.2.0.tar.gz' };
const PYPPTX: Source = { kind: 'pypi', name: 'python-pptx', version: '1.0.2', archive: 'python_pptx-1.0.2.tar.gz' };
const ODFPY: Source = { kind: 'pypi', name: 'odfpy', version: '1.4.1', archive: 'odfpy-1.4.1.tar.gz' };
const XLSX2CSV: Source = { kind: 'pypi', name: 'xlsx2csv', version: '0.8.4', archive: 'xlsx2csv-0.8.4.tar.gz' };
const CALIBRE: Source = { kind: 'deb', name: 'calibre', version: '6.13.0+repack-2+deb12u10' };
const PYTEST: Source = { kind: 'deb', name: 'libpython3.11-testsuite', version: '3.11.2-6+deb12u9' };
const RHTML: Source = { kind: 'deb', name: 'r-doc-html', version: '4.2.2.20221110-2' };

const doc = (name: string, source: Source, member: string, sha256: string): RealDocument => ({
  name,
  format: path.extname(name).slice(1) as BenchFormat,
  source,
  member,
  sha256,
});
const tika = (source: Source, file: string, sha256: string, name = `tika-${path.basename(file)}`) =>
  doc(name, source, `test-documents/${file}`, sha256);

export const REAL_DOCUMENTS: RealDocument[] = [
  tika(MS, 'testWORD.docx', '67797f5691cb5346201f1c40000a959f9f08d05d0b4493b4291e8d5f16e81e65'),
  tika(MS, 'testWORD_2006ml.docx', 'bad4b658718bcbc2ca837ce1679e24871d50a0e9f6987b4ade6b4a3e83be47ba'),
  tika(MS, 'testWORD_numbered_list.docx', '3e500410c6ce4f56f871bd55beff2476152fc3d0b7049cf5a93781ae7946ff5b'),
  tika(MS, 'testWORD_override_list_numbering.docx', '2d88b75145043fb8eef1d851e595b1d0f01d5a342552919fe3af22b36b57d086'),
  tika(MS, 'testWORD_template.docx', 'b05df2e299e825b5b25b34ff5af63f3c309bf6afcd94b3dd8fab224ac507f163'),
  tika(MS, 'testWORD_various.docx', 'f7761e3893d795ed09f12f89a16d3265c3919da549adf00127b0f7094bccd0ee'),
  doc(
    'python-docx-tbl-props.docx',
    PYDOCX,
    'python_docx-1.2.0/features/steps/test_files/tbl-props.docx',
    '70f6a24488b85609e5d3ceaed653e584d23e6867a7f22bd267827d73fbfc2cad',
  ),
  tika(MS, 'testPPT.pptx', '730a6ade20208eaad375160949db37b2ffb52af4d3704b51976ff45564bff83b'),
  tika(MS, 'testPPT_various.pptx', '73e19e877797b9deb87f1d242c3d7aa6edb383258ca90054f9a912d3adb26a73'),
  tika(MS, 'testPPT_various2.pptx', '24f56e909a0597264ca77e340c291382530f08b17bf03ead33e8c17b389a7938'),
  tika(MS, 'testPPT_groups.pptx', 'e8d4cd55569be22849a584bff949d07e8c16abbd00b59feedc43f17c33b4061f'),
  tika(MS, 'test_embedded_zip.pptx', '30df64ea3fb5ab87c19db626cf45003fa3c909127517b98ab05052bd7093a242'),
  doc(
    'python-pptx-tbl-cell.pptx',
    PYPPTX,
    'python_pptx-1.0.2/features/steps/test_files/tbl-cell.pptx',
    '02df45aad4927c4c471d76d4f638e82e14c42d4db773103cf8f950f73b0ae976',
  ),
  tika(MS, 'testEXCEL.xlsx', '960ba8f1cfa5838b563c369d281babe4ac0219100e00cecc93147fad22c549c3'),
  tika(MS, 'testEXCEL_headers_footers.xlsx', 'c317b80a473fea5549ed241e813f734bffa01c2a9587170bd4254e4d143f2b2d'),
  tika(MS, 'testEXCEL_phonetic.xlsx', '3a68ed7bcd764b4f38ab6a66d5385a644b84de8572b00aefb4316b43a274882b'),
  doc(
    'xlsx2csv-test-file.xlsx',
    XLSX2CSV,
    'xlsx2csv-0.8.4/test/xlsx2csv-test-file.xlsx',
    'ec595db1691fccc21e8a653a648a9667ac1d527a76f303cf0b6bf91be5f9b3d1',
  ),
  doc(
    'xlsx2csv-sheets.xlsx',
    XLSX2CSV,
    'xlsx2csv-0.8.4/test/sheets.xlsx',
    'c8560e79b66ebbc3f87667f13a8bd4688fdff5251d60526c476e5d062d20255f',
  ),
  doc(
    'odfpy-api-for-odfpy.odt',
    ODFPY,
    'odfpy-1.4.1/api-for-odfpy.odt',
    'a1fa31f5317f40f0de5d5837528fb34967b4043b236a63c27b6d65755a006e97',
  ),
  tika(MISC, 'testNPEOpenDocument.odt', '4a9bea2bd669d76756c0e4e81cb0b1a1d888b3469144901e23d45fe9bd4f7ccc'),
  tika(MISC, 'testODTStyles2.odt', 'eaa2f7d3fa686751699227a06b24e9e2b587da9db15d838ff93af8c5b14fabb8'),
  tika(MISC, 'testStyles.odt', 'b70625835f2c1fe8fd4c3b625bb51b0b10e323b1a92d3c338c3be4e2cf16a766'),
  tika(
    MISC,
    'versions/LibreOfficeCalc_ods_1.3.ods',
    'f75caa9ca8d088f4875b38dfc2f6f6e408e13ee8b3d0d8b7130a99c5a2cb7f84',
  ),
  tika(MISC, 'testFooter.ods', '4a145b8d935ca91506a7f8a65c3df4e8ff655261337cedbeb4ae2494ec8fe3c3'),
  doc(
    'odfpy-pythagoras.ods',
    ODFPY,
    'odfpy-1.4.1/tests/examples/pythagoras.ods',
    'fe4e2f4388bcb02a6dbad417b8cdb3e648c146921d30cf1dd6476847a9677189',
  ),
  tika(MISC, 'testODP_NPE.odp', '1fbb574d53faa5b7f5a9ddc139ce770441b321536d57ba03edb196ff9aed7de4'),
  tika(
    MISC,
    'versions/LibreOfficeImpress_odp_1.3.odp',
    'ecc8129a5b22c77b378504d87774ef26245d9e4146e8b15ec30a2f58fd0ebb93',
  ),
  doc(
    'calibre-quick-start-eng.epub',
    CALIBRE,
    'usr/share/calibre/quick_start/eng.epub',
    '4963b48a75612d19b78b07558f5fc5c1706f22b9b6c1608be84dbb03bf6a912f',
  ),
  tika(MISC, 'testEPUB.epub', 'a4cc54d0311911edab12911168ce9277d8a20d45f3445f93eac61d0e5fd88d2e'),
  tika(MISC, 'testEPUB_multi-metadata-vals.epub', 'a1a3772b7e718c6bddead4c9acded6c0dd466e5c1c1f6d4f6cae5484c3e6fe33'),
  tika(
    MAIL,
    'testRFC822_multipart_attachments.eml',
    '86e5feb18e16178359d6aaa704bd74ceebe7a41f302df5b656f5e6fe0ea34cc5',
  ),
  tika(MAIL, 'testEmailWithPNGAtt.eml', '158ddebe483893550ddcaf7ccee1a31085cb998b5df932710b62cb31fb0f2876'),
  tika(MAIL, 'testRFC822_x-.eml', '715624c9513532ec40619edccba598b7724610844f3551123e37d3bb0c547f7d'),
  tika(MS, 'testEML_embedded_xhtml_and_img.eml', 'f1bfae592591b28d973cbd07606117fe3e3a45a61c85f11a7c488dff836ca5d0'),
  doc(
    'cpython-email-msg_02.eml',
    PYTEST,
    'usr/lib/python3.11/test/test_email/data/msg_02.txt',
    '05d5e533f5e590d9ee2c7692d26dc87ccbf381f4831cca3362baf596691a55bb',
  ),
  doc(
    'cpython-email-msg_07.eml',
    PYTEST,
    'usr/lib/python3.11/test/test_email/data/msg_07.txt',
    '8358092b45c8631df6466a2e4dc23278263b2dd2ba5765e99caba47c304dd3b5',
  ),
  doc(
    'r-doc-html-R-FAQ.html',
    RHTML,
    'usr/share/R/doc/manual/R-FAQ.html',
    '78f785368d69dffb136231f47f53ba9c165f37f4fb99daef6d5d9cbdc31acdc1',
  ),
  doc(
    'r-doc-html-R-data.html',
    RHTML,
    'usr/share/R/doc/manual/R-data.html',
    '0d3d4c4befc6e4b30701ec358f7da73487a6eb520b9b768145dcaf72db27a39f',
  ),
];

const quiet = { stdio: ['ignore', 'ignore', 'inherit'] as ['ignore', 'ignore', 'inherit'] };

/** The package's archive (jar, sdist) or unpacked tree (deb) in the cache, fetched on first use. */
function packageRoot(s: Source): string {
  if (s.kind === 'maven') {
    const [group, artifact, version] = s.artifact.split(':');
    const jar = path.join(os.homedir(), '.m2', 'repository', ...group!.split('.'), artifact!, version!);
    const file = path.join(jar, `${artifact}-${version}-tests.jar`);
    if (!fs.existsSync(file))
      execFileSync('mvn', ['-q', 'dependency:get', `-Dartifact=${s.artifact}`, '-Dtransitive=false'], quiet);
    return file;
  }
  if (s.kind === 'pypi') {
    const dir = path.join(BENCH_DOCUMENTS_CACHE, 'sdists');
    const file = path.join(dir, s.archive);
    if (!fs.existsSync(file))
      execFileSync(
        'python3',
        ['-m', 'pip', 'download', '-q', '--no-deps', '--no-binary', s.name, `${s.name}==${s.version}`, '-d', dir],
        quiet,
      );
    return file;
  }
  const root = path.join(BENCH_DOCUMENTS_CACHE, 'root', s.name);
  if (!fs.existsSync(root)) {
    const debs = path.join(BENCH_DOCUMENTS_CACHE, 'debs', s.name);
    fs.mkdirSync(debs, { recursive: true });
    try {
      execFileSync('apt-get', ['download', `${s.name}=${s.version}`], { ...quiet, cwd: debs });
    } catch {
      // A security update replaced the pinned version: the newest one, its files checked by their sha256 below.
      execFileSync('apt-get', ['download', s.name], { ...quiet, cwd: debs });
    }
    const deb = fs.readdirSync(debs).find((f) => f.endsWith('.deb'))!;
    fs.mkdirSync(root, { recursive: true });
    execFileSync('dpkg-deb', ['-x', path.join(debs, deb), root]);
  }
  return root;
}

function extract(d: RealDocument): Buffer {
  const root = packageRoot(d.source);
  const big = { maxBuffer: 1 << 28 };
  if (d.source.kind === 'maven') return execFileSync('unzip', ['-p', root, d.member], big);
  if (d.source.kind === 'pypi') return execFileSync('tar', ['-xzOf', root, d.member], big);
  return fs.readFileSync(path.join(root, d.member));
}

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * The documents' paths in the cache, fetched on first use; the files whose sha256 is not the pinned one, and those that
 * could not be fetched (a client missing here, a registry that refused), which the bench leaves out and names.
 */
export function provisionDocuments(): {
  files: { doc: RealDocument; file: string }[];
  changed: string[];
  missing: string[];
} {
  const dir = path.join(BENCH_DOCUMENTS_CACHE, 'files');
  fs.mkdirSync(dir, { recursive: true });
  const changed: string[] = [];
  const missing: string[] = [];
  const files: { doc: RealDocument; file: string }[] = [];
  for (const d of REAL_DOCUMENTS) {
    const file = path.join(dir, d.name);
    try {
      if (!fs.existsSync(file)) fs.writeFileSync(file, extract(d));
    } catch (e) {
      missing.push(`${d.name} (${(e as Error).message.split('\n')[0]})`);
      continue;
    }
    if (sha256(fs.readFileSync(file)) !== d.sha256) changed.push(d.name);
    files.push({ doc: d, file });
  }
  return { files, changed, missing };
}
