// Turns the processes' JSON log lines into readable, prefixed lines for a terminal. Plain Node.
import readline from 'node:readline';

const COLORS = { api: 36, worker: 35, temporal: 33, setup: 32, minio: 34 };
const LEVEL = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR', fatal: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'svc', 'name', 'pid', 'hostname', 'v']);

function fmtValue(v) {
  if (typeof v === 'string') return /\s/.test(v) ? JSON.stringify(v) : v;
  if (v && typeof v === 'object' && 'message' in v && 'stack' in v) return JSON.stringify(v.message) + '\n' + v.stack;
  return JSON.stringify(v);
}

export function formatLine(line) {
  if (!line.startsWith('{')) return line;
  try {
    const o = JSON.parse(line);
    const time = typeof o.time === 'string' ? o.time.slice(11, 19) : '';
    const rest = Object.entries(o)
      .filter(([k]) => !SKIP.has(k))
      .map(([k, v]) => `${k}=${fmtValue(v)}`)
      .join(' ');
    return `${time} ${LEVEL[o.level] ?? String(o.level).toUpperCase()} ${o.msg ?? ''}${rest ? '  ' + rest : ''}`;
  } catch {
    return line;
  }
}

/** Pipes a child's stream to our stdout, a prefix per line; JSON lines are formatted unless `raw`. */
export function pipePrefixed(stream, name, { raw = false, color = process.stdout.isTTY } = {}) {
  const prefix = color ? `\x1b[${COLORS[name] ?? 37}m${name.padEnd(8)}\x1b[0m|` : `${name.padEnd(8)}|`;
  const rl = readline.createInterface({ input: stream });
  rl.on('line', (line) => process.stdout.write(`${prefix} ${raw ? line : formatLine(line)}\n`));
}
