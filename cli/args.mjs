/**
 * Argument parsing of the docproc CLI: positionals, repeated `--field k=v` (`k:=json` for a JSON value), `--file`,
 * boolean flags and `--name value` options. Unknown options are a usage error (exit 2), never silently ignored.
 */

export class UsageError extends Error {}

const BOOLEAN = new Set(['json', 'no-follow', 'quiet', 'help', 'job', 'async', 'markdown']);
const VALUED = new Set([
  'field',
  'file',
  'url',
  'method',
  'out',
  'language',
  'target-language',
  'source-language',
  'template',
  'html',
  'text',
  'body',
  'wait',
  'subtitles',
]);

/**
 * @returns {{ positionals: string[], fields: [string, unknown][], files: string[], flags: Set<string>, opts:
 * Record<string, string> }}
 */
export function parseArgs(argv) {
  const positionals = [];
  const fields = [];
  const files = [];
  const flags = new Set();
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h') {
      flags.add('help');
      continue;
    }
    if (a === '-o') {
      opts.out = need(argv, ++i, a);
      continue;
    }
    if (!a.startsWith('--') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (BOOLEAN.has(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      flags.add(name);
      continue;
    }
    if (!VALUED.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq > 0 ? a.slice(eq + 1) : need(argv, ++i, a);
    if (name === 'field') fields.push(parseField(value));
    else if (name === 'file') files.push(value);
    else opts[name] = value;
  }
  return { positionals, fields, files, flags, opts };
}

function need(argv, i, name) {
  if (i >= argv.length) throw new UsageError(`${name} needs a value`);
  return argv[i];
}

/** `k=v` (a string) or `k:=json` (any JSON value: numbers, booleans, objects). */
export function parseField(s) {
  const json = /^([^=:]+):=(.*)$/s.exec(s);
  if (json) {
    try {
      return [json[1], JSON.parse(json[2])];
    } catch {
      throw new UsageError(`--field ${json[1]}:= needs a JSON value`);
    }
  }
  const plain = /^([^=]+)=(.*)$/s.exec(s);
  if (!plain) throw new UsageError(`--field takes name=value (or name:=json), got "${s}"`);
  return [plain[1], plain[2]];
}
