/**
 * What starting poppler costs a big Node process (issue 24): `pdftotext` over a generated PDF, started directly
 * (`runTool`: Node forks, copying the caller's page tables, on its event loop) and through the tool launcher
 * (providers/process/launcher.ts: a python3 process that starts it with vfork), interleaved, in this process grown to
 * the API's size with ballast (filled buffers). The direct start is the raw engine's baseline. Prints wall time per
 * run (min, p25, median), the event loop's longest stall during each run (a 1 ms interval timer) and the ratios
 * launcher / direct. Asserts nothing.
 *
 *   npx tsx bench/spawn.bench.ts
 *
 * Knobs (env): BENCH_SPAWN_BALLAST_MB (150: this process then holds ~230 MB of anonymous memory, as the API after
 * some requests, 190–250 MB), BENCH_SPAWN_PAGES (80), BENCH_SPAWN_RUNS (25 each way).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildPdf } from '../test/support/documents/pdf-factory';
import { ToolLauncher } from '../providers/process/launcher';
import { runTool } from '../providers/process/run-tool';
import { envInt } from './support';

const BALLAST_MB = envInt('BENCH_SPAWN_BALLAST_MB', 150);
const PAGES = envInt('BENCH_SPAWN_PAGES', 80);
const RUNS = envInt('BENCH_SPAWN_RUNS', 25);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-bench-spawn-'));
const file = path.join(dir, 'doc.pdf');
fs.writeFileSync(
  file,
  buildPdf({
    pages: Array.from({ length: PAGES }, (_, p) => ({
      kind: 'lines' as const,
      lines: Array.from({ length: 46 }, (_, i) => `Seite ${p + 1} Zeile ${i}: Lorem ipsum dolor sit amet, consectetur`),
      size: 10,
    })),
  }),
);
const ballast = Array.from({ length: BALLAST_MB }, (_, i) => Buffer.alloc(1 << 20, i & 255));
const anonMb = () => Number(/RssAnon:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) >> 10;

const args = ['-enc', 'UTF-8', '-f', '1', '-l', String(PAGES), file, '-'];
const launcher = new ToolLauncher();
const ways = {
  direct: () => runTool('pdftotext', args, { timeoutMs: 60_000 }),
  launcher: () => launcher.run('pdftotext', args, { timeoutMs: 60_000 }),
};
type Way = keyof typeof ways;
const wall: Record<Way, number[]> = { direct: [], launcher: [] };
const stall: Record<Way, number[]> = { direct: [], launcher: [] };

async function main(): Promise<void> {
  const sizes = new Set<number>();
  for (const way of Object.keys(ways) as Way[]) sizes.add((await ways[way]()).stdout.length);
  if (sizes.size !== 1) throw new Error(`the two ways gave different outputs: ${[...sizes].join(', ')} bytes`);
  let longest = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
  }, 1);
  for (let i = 0; i < RUNS; i++) {
    for (const way of Object.keys(ways) as Way[]) {
      await new Promise((r) => setTimeout(r, 5));
      longest = 0;
      const t0 = performance.now();
      await ways[way]();
      wall[way].push(performance.now() - t0);
      stall[way].push(longest);
    }
  }
  clearInterval(tick);
  launcher.stop();
  const q = (v: number[], f: number) => [...v].sort((a, b) => a - b)[Math.floor(f * (v.length - 1))];
  const row = (v: number[]) =>
    `min ${q(v, 0).toFixed(1)}  p25 ${q(v, 0.25).toFixed(1)}  median ${q(v, 0.5).toFixed(1)} ms`;
  console.log(
    `pdftotext over ${PAGES} generated pages (${[...sizes][0]} bytes of text), ${RUNS} runs each way, interleaved; ` +
      `this process: RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB, anonymous ${anonMb()} MB ` +
      `(ballast ${ballast.length} MB); load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  for (const way of Object.keys(ways) as Way[])
    console.log(`${way.padEnd(9)} wall ${row(wall[way])} | longest event-loop stall ${row(stall[way])}`);
  console.log(
    `launcher / direct: wall min ${(q(wall.launcher, 0) / q(wall.direct, 0)).toFixed(2)}×, median ${(q(wall.launcher, 0.5) / q(wall.direct, 0.5)).toFixed(2)}×; ` +
      `event-loop stall median ${q(stall.launcher, 0.5).toFixed(1)} vs ${q(stall.direct, 0.5).toFixed(1)} ms`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
