import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError, type Config } from '../config/config';

type TemporalSettings = Pick<
  Config,
  | 'temporalAddress'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_API_KEY'
  | 'TEMPORAL_TLS_CERT'
  | 'TEMPORAL_TLS_KEY'
  | 'TEMPORAL_TLS_CA'
  | 'TEMPORAL_TLS_SERVER_NAME'
>;

/** Connection options for the Temporal service, shared by the API, the worker and `npm run setup`. */
interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/**
 * Maps the `TEMPORAL_*` settings to the options `Connection.connect` and `NativeConnection.connect` take (both
 * accept this TLSConfig shape). TLS is on when `TEMPORAL_TLS` is set, with an API key (Temporal Cloud), or with
 * any of the mTLS settings: the client pair (`TEMPORAL_TLS_CERT` + `TEMPORAL_TLS_KEY`), a private CA
 * (`TEMPORAL_TLS_CA`) or an SNI override (`TEMPORAL_TLS_SERVER_NAME`). PEM files are read here, once per
 * connection; an unreadable file names its variable and path (never its content).
 */
export function temporalConnectionOptions(
  config: TemporalSettings,
  readFile: (path: string) => Buffer = fs.readFileSync,
): TemporalConnectionOptions {
  const read = (name: string, file: string) => {
    try {
      return readFile(file);
    } catch (err) {
      throw new ConfigError(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const tlsConfig: TLSConfig = {};
  if (config.TEMPORAL_TLS_CERT && config.TEMPORAL_TLS_KEY) {
    tlsConfig.clientCertPair = {
      crt: read('TEMPORAL_TLS_CERT', config.TEMPORAL_TLS_CERT),
      key: read('TEMPORAL_TLS_KEY', config.TEMPORAL_TLS_KEY),
    };
  }
  if (config.TEMPORAL_TLS_CA) tlsConfig.serverRootCACertificate = read('TEMPORAL_TLS_CA', config.TEMPORAL_TLS_CA);
  if (config.TEMPORAL_TLS_SERVER_NAME) tlsConfig.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  const tls = config.TEMPORAL_TLS || Boolean(config.TEMPORAL_API_KEY) || Object.keys(tlsConfig).length > 0;
  return {
    address: config.temporalAddress,
    ...(tls ? { tls: tlsConfig } : {}),
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}
