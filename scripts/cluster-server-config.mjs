// The Temporal server's configuration in the cluster layout (scripts/cluster-server.mjs): the settings read from the
// compose file's variables, the server's YAML and its dynamic config, and what stands for each compose service. Pure:
// no process is started here; test/integration/cluster-compose.test.ts keeps it in step with docker-compose.yml.
import { POSTGRES_USER } from './postgres.mjs';
import { DEV_SERVER_DYNAMIC_CONFIG } from './services.mjs';

export { POSTGRES_USER };

/** History shards of the server (fixed for the life of a database: the schema is made for this many). */
export const HISTORY_SHARDS = 4;
/** The server's databases (the auto-setup image's defaults). */
export const DATABASES = { temporal: 'temporal', visibility: 'temporal_visibility' };

/**
 * What the compose file's `temporal` service is told, and what this layout reads for the same thing (a test keeps
 * the two in step): the password, the namespace it creates and that namespace's retention.
 */
export function serverSettings(env = process.env) {
  return {
    password: env.POSTGRES_PASSWORD || 'temporal',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    retention: env.TEMPORAL_RETENTION || '7d',
  };
}

/**
 * docker-compose.yml's services and what stands for each in this layout (test/integration/cluster-compose.test.ts
 * fails when the compose file gains a service this layout does not account for).
 */
export const COMPOSE_STAND_INS = {
  postgresql: "the postgresql process (Debian's PostgreSQL, data under DATA_DIR/postgresql)",
  temporal: "the temporal process (the Temporal server built at the auto-setup image's version)",
  'temporal-ui': "the temporal-ui process (the UI server built at the ui image's version)",
  'temporal-setup': 'scripts/setup.mjs --temporal-namespace, run once the server answers',
  minio: 'the minio process',
  'minio-setup': 'none needed: the service creates a missing bucket at start',
  'api-1': 'api-1 (--apis N: api-1 … api-N)',
  'api-2': 'api-2',
  'worker-io': 'io-1 … (--io-workers N, WORKER_QUEUES=io,llm)',
  'worker-media': 'media-1 … (--media-workers N, WORKER_QUEUES=media)',
};

/**
 * The compose file's `temporal` service variables and how this layout sets each: from the same shell variable with
 * the same default (`serverSettings`), or fixed by the layout.
 */
export const TEMPORAL_SERVICE_VARIABLES = {
  DB: { fixed: 'postgres12' },
  DB_PORT: { fixed: 'a free port' },
  POSTGRES_USER: { fixed: POSTGRES_USER },
  POSTGRES_PWD: { from: 'POSTGRES_PASSWORD', setting: 'password' },
  POSTGRES_SEEDS: { fixed: '127.0.0.1' },
  DEFAULT_NAMESPACE: { from: 'TEMPORAL_NAMESPACE', setting: 'namespace' },
  DEFAULT_NAMESPACE_RETENTION: { from: 'TEMPORAL_RETENTION', setting: 'retention' },
  DYNAMIC_CONFIG_FILE_PATH: {
    fixed: 'config/dynamicconfig.yaml under the server root, written by dynamicConfigYaml()',
  },
};

/** Ports of the server: the frontend's gRPC and HTTP, and each service's gRPC and membership (ringpop) port. */
export const PORT_NAMES = [
  'frontend',
  'frontendHttp',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
];

/** The dynamic config file of the server: the project's settings (scripts/services.mjs), typed. */
export function dynamicConfigYaml(settings = DEV_SERVER_DYNAMIC_CONFIG) {
  const typed = (v) => (v === 'true' || v === 'false' ? v : /^\d+$/.test(v) ? v : JSON.stringify(v));
  return Object.entries(settings)
    .map(([k, v]) => `${k}:\n  - value: ${typed(v)}\n`)
    .join('');
}

/** The server's configuration (its `docproc` environment), persistence and visibility on PostgreSQL. */
export function serverConfigYaml({ pgPort, password, ports, dynamicConfigFile, logLevel = 'warn' }) {
  const store = (db, conns) =>
    [
      `      sql:`,
      `        pluginName: "postgres12"`,
      `        databaseName: "${db}"`,
      `        connectAddr: "127.0.0.1:${pgPort}"`,
      `        connectProtocol: "tcp"`,
      `        user: "${POSTGRES_USER}"`,
      `        password: ${JSON.stringify(password)}`,
      `        maxConns: ${conns}`,
      `        maxIdleConns: ${conns}`,
      `        maxConnLifetime: "1h"`,
    ].join('\n');
  const svc = (name, grpc, membership, extra = '') =>
    `  ${name}:\n    rpc:\n      grpcPort: ${grpc}\n      membershipPort: ${membership}\n      bindOnLocalHost: true\n${extra}`;
  return `# Written by npm run cluster -- --temporal server (scripts/cluster-server-config.mjs) at every start.
log:
  stdout: true
  level: ${logLevel}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${HISTORY_SHARDS}
  datastores:
    postgres-default:
${store(DATABASES.temporal, 20)}
    postgres-visibility:
${store(DATABASES.visibility, 4)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"

services:
${svc('frontend', ports.frontend, ports.frontendMembership, `      httpPort: ${ports.frontendHttp}\n`)}
${svc('history', ports.history, ports.historyMembership)}
${svc('matching', ports.matching, ports.matchingMembership)}
${svc('worker', ports.worker, ports.workerMembership)}

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontend}"

dcRedirectionPolicy:
  policy: "noop"

dynamicConfigClient:
  filepath: ${JSON.stringify(dynamicConfigFile)}
  pollInterval: "10s"
`;
}
