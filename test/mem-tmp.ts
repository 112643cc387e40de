import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { S3BlobStore, LocalBlobStore } from '/work/main/providers/storage';
import { sharedMinioServer, stopSharedServers, tempDir } from '/work/main/test/support/servers';
const MB = 1024*1024;
import v8 from 'node:v8'; import vm from 'node:vm';
v8.setFlagsFromString('--expose-gc'); const gc = vm.runInNewContext('gc') as () => void;
function gen(total: number) { let p = 0; const seed = randomBytes(65536); return new Readable({ read() { if (p >= total) return void this.push(null); const c = Buffer.allocUnsafe(65536); seed.copy(c); c.writeUInt32BE(p/65536); p += 65536; this.push(c); } }); }
async function measure(label: string, fn: () => Promise<unknown>) {
  gc(); const b = process.memoryUsage(); let ph = 0, pr = 0;
  const t = setInterval(() => { gc(); const m = process.memoryUsage(); ph = Math.max(ph, m.heapUsed + m.arrayBuffers - b.heapUsed - b.arrayBuffers); pr = Math.max(pr, m.rss - b.rss); }, 25);
  await fn(); clearInterval(t); console.log(label, (ph/MB).toFixed(1), (pr/MB).toFixed(1));
}
const m = await sharedMinioServer();
const s3 = await new S3BlobStore({ endpoint: m.endpoint, accessKey: m.accessKey, secretKey: m.secretKey, bucket: 'memtest' }).init();
const local = await new LocalBlobStore(tempDir()).init();
for (let i = 0; i < 4; i++) {
  await measure('s3 put', () => s3.put('big'+i, gen(40*MB)));
  await measure('s3 put', () => s3.put('big', gen(40*MB)));
  await measure('s3 get', async () => { for await (const _ of await s3.get('big')); });
  await measure('local put', () => local.put('big', gen(40*MB)));
  await measure('local get', async () => { for await (const _ of await local.get('big')); });
}
await stopSharedServers();
