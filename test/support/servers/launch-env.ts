import { loopbackLaunchEnv } from '../../../scripts/launch-env.mjs';

/**
 * The configuration `npm start` would give its children for `env` (scripts/launch-env.mjs): on a loopback HOST (the
 * default) ALLOW_PRIVATE_URLS, ALLOW_HTTP_CALLBACKS and INPUT_ROOTS with the temp directory, unless `env` sets them.
 * The in-process test stacks stand for `npm start`, whose test servers (sites, receivers, model doubles) are on
 * loopback; a test of the guard sets HOST to a public address or ALLOW_PRIVATE_URLS=false.
 */
export function asNpmStart<T extends Record<string, string | undefined>>(env: T): T {
  return { ...env, ...loopbackLaunchEnv(env).set };
}
