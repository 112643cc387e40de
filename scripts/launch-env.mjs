// What `npm start` decides for all its children when its API listens on loopback only (contract §2): then nobody
// else can reach the stack, so private and loopback targets are allowed (ALLOW_PRIVATE_URLS), an http callback_url
// is accepted (ALLOW_HTTP_CALLBACKS) and job filenames may lie in the system temp directory too (INPUT_ROOTS). No
// process infers any of this from where it listens: `npm run cluster` and docker-compose.yml never call this, and a
// value the operator set explicitly is kept. Plain Node, no dependency; test/support mirrors `npm start` with it.
import os from 'node:os';
import path from 'node:path';

/** The same test as core/config/config.ts `isLoopbackHost`: a loopback name or address, IPv4, IPv6 or mapped. */
export function isLoopbackHost(host) {
  const h = String(host)
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

/**
 * The variables `npm start` adds for its children: none unless `env.HOST` (default 127.0.0.1) is loopback; then
 * ALLOW_PRIVATE_URLS=true, ALLOW_HTTP_CALLBACKS=true and INPUT_ROOTS=<DATA_DIR>,<temp dir>, each only where `env`
 * does not set it. Answers `{ set, names }`: the variables to add and their names (for the log line).
 */
export function loopbackLaunchEnv(env, dataDir = env.DATA_DIR || '.data') {
  const set = {};
  if (!isLoopbackHost(env.HOST || '127.0.0.1')) return { set, names: [] };
  const unset = (k) => (env[k] ?? '').trim() === '';
  if (unset('ALLOW_PRIVATE_URLS')) set.ALLOW_PRIVATE_URLS = 'true';
  if (unset('ALLOW_HTTP_CALLBACKS')) set.ALLOW_HTTP_CALLBACKS = 'true';
  if (unset('INPUT_ROOTS')) set.INPUT_ROOTS = [path.resolve(dataDir), os.tmpdir()].join(',');
  return { set, names: Object.keys(set) };
}
