/**
 * The process test/support/servers/llm-double.ts starts: the wire-protocol LLM double on LLM_DOUBLE_PORT, every request
 * journaled to LLM_DOUBLE_LOG (appended synchronously before the answer is written, so a SIGKILL loses no line).
 */
import fs from 'node:fs';
import { doubleContent, markerIn, requestKey, userText, type DoubleEntry } from './llm-double';
import { startLlmServer, type LlmRequest } from './llm-server';

const log = process.env.LLM_DOUBLE_LOG!;
const holdFile = process.env.LLM_DOUBLE_HOLD!;
const generationMs = Number(process.env.LLM_DOUBLE_GENERATION_MS ?? 0);
const seqOf = new WeakMap<LlmRequest, number>();
let seq = 0;

function write(req: LlmRequest, event: DoubleEntry['event']): void {
  const entry: DoubleEntry = {
    t: Date.now(),
    pid: process.pid,
    seq: seqOf.get(req) ?? -1,
    event,
    key: requestKey(req.json),
    marker: markerIn(userText(req.json)),
  };
  fs.appendFileSync(log, `${JSON.stringify(entry)}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const server = await startLlmServer({
  apiKey: process.env.LLM_DOUBLE_KEY,
  port: Number(process.env.LLM_DOUBLE_PORT),
  onReply: (req, _content, delivered) => write(req, delivered ? 'answered' : 'dropped'),
  onClientGone: (req) => write(req, 'gone'),
});
server.respond(async (req) => {
  seqOf.set(req, ++seq);
  write(req, 'received');
  await sleep(generationMs);
  while (fs.existsSync(holdFile)) await sleep(50);
  return { content: doubleContent(req.json) };
});
// The hold's state as this process sees it, journaled when it changes: an answer journaled before a `hold` line went
// out before the hold; any later one waits for the release (its check and its answer run in one turn of this loop).
let held = false;
setInterval(() => {
  if (fs.existsSync(holdFile) === held) return;
  held = !held;
  const entry = { t: Date.now(), pid: process.pid, seq: -1, event: held ? 'hold' : 'release', key: '', marker: '' };
  fs.appendFileSync(log, `${JSON.stringify(entry)}\n`);
}, 20);
process.stdout.write(`llm double listening on ${server.port}\n`);
