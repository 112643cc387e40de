import { readFileSync } from 'node:fs';

/** The package version, carried by `X-Service-Version` and OpenAPI `info.version`. */
export const SERVICE_NAME = 'docproc';
export const SERVICE_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
