// Worker-thread entry for test/integration/thread-pool.test.ts: answers `echo`, fails (`fail`, `coded`: with a code
// and details), or misbehaves on purpose
// (`hog` allocates until the thread's heap limit ends it, `spin` never yields).
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ id, op, value }) => {
  if (op === 'echo') parentPort.postMessage({ id, result: value });
  else if (op === 'fail') parentPort.postMessage({ id, error: `failed on ${value}` });
  else if (op === 'coded')
    parentPort.postMessage({ id, error: 'coded failure', code: 'SOME_CODE', details: { value } });
  else if (op === 'hog') {
    const keep = [];
    for (;;) keep.push(new Array(1_000_000).fill(keep.length));
  } else if (op === 'spin') {
    for (;;);
  }
});
