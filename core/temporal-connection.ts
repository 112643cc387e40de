import type { Config } from './config';

/** Connection options for the Temporal service, shared by the API and the worker. */
export function temporalConnectionOptions(config: Config): {
  address: string;
  tls?: boolean | Record<string, never>;
  apiKey?: string;
} {
  const tls = config.TEMPORAL_TLS || Boolean(config.TEMPORAL_API_KEY);
  return {
    address: config.temporalAddress,
    ...(tls ? { tls: {} } : {}),
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}
