import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { configSchema, loadConfig } from '../../core/config/config';
import { outboundPolicy } from '../../providers/http/ssrf';
import { ROOT } from '../support/servers/processes';

/**
 * docker-compose.yml, validated offline by Debian's docker-compose 1.29 (installed by the test setup; no container
 * runtime is needed or used), and every environment variable checked against the service's configuration schema or
 * the third-party image's documented variables.
 */
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
const REQUIRED = { SERVICE_API_KEY: 'test-key', S3_SECRET_KEY: 'test-secret-123' };

/** Variables the third-party images document (postgres, temporalio/auto-setup and ui, minio and mc). */
const THIRD_PARTY: Record<string, string[]> = {
  postgres: ['POSTGRES_USER', 'POSTGRES_PASSWORD'],
  'temporalio/auto-setup': [
    'DB',
    'DB_PORT',
    'POSTGRES_USER',
    'POSTGRES_PWD',
    'POSTGRES_SEEDS',
    'DEFAULT_NAMESPACE',
    'DEFAULT_NAMESPACE_RETENTION',
    'DYNAMIC_CONFIG_FILE_PATH',
  ],
  'temporalio/ui': ['TEMPORAL_ADDRESS', 'TEMPORAL_CORS_ORIGINS'],
  'minio/minio': ['MINIO_ROOT_USER', 'MINIO_ROOT_PASSWORD'],
  'minio/mc': ['MINIO_ROOT_USER', 'MINIO_ROOT_PASSWORD'],
};

function compose(args: string[], env: Record<string, string>) {
  // Only the variables given: the developer's shell must not decide whether the file validates.
  const r = spawnSync('docker-compose', ['-f', COMPOSE_FILE, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
  });
  if (r.error)
    throw new Error(
      `docker-compose is not installed (npm test's setup installs the Debian package): ${r.error.message}`,
    );
  return r;
}

describe('docker-compose.yml', () => {
  let services: Record<string, any>;
  before(() => {
    const r = compose(['config'], REQUIRED);
    expect(r.status, r.stderr).to.equal(0);
    services = parse(r.stdout).services;
  });

  it('validates with docker-compose config -q, and refuses to resolve without SERVICE_API_KEY and S3_SECRET_KEY', () => {
    const ok = compose(['config', '-q'], REQUIRED);
    expect(ok.status, ok.stderr).to.equal(0);
    const noKey = compose(['config', '-q'], { S3_SECRET_KEY: REQUIRED.S3_SECRET_KEY });
    expect(noKey.status).to.not.equal(0);
    expect(noKey.stderr).to.include('set SERVICE_API_KEY');
    const noSecret = compose(['config', '-q'], { SERVICE_API_KEY: REQUIRED.SERVICE_API_KEY });
    expect(noSecret.stderr).to.include('set S3_SECRET_KEY');
  });

  it('runs Temporal on PostgreSQL with its UI, MinIO with a bucket set-up, two APIs, an io and a media worker, with pinned images', () => {
    expect(Object.keys(services).sort()).to.deep.equal(
      [
        'api-1',
        'api-2',
        'minio',
        'minio-setup',
        'postgresql',
        'temporal',
        'temporal-setup',
        'temporal-ui',
        'worker-io',
        'worker-media',
      ].sort(),
    );
    for (const [name, s] of Object.entries(services)) {
      const tag = String(s.image).split(':')[1];
      expect(tag, `${name} image tag`).to.be.a('string').and.not.equal('latest');
      if (!String(s.image).startsWith('docproc:')) expect(tag, `${name}: a version, not a moving tag`).to.match(/\d/);
    }
    expect(services.temporal.environment.DB).to.equal('postgres12');
    expect(services.minio.healthcheck.test).to.be.an('array');
    expect(services['minio-setup'].command.join(' ')).to.include('mc mb --ignore-existing');
    expect(services['temporal-setup'].command).to.deep.equal(['setup', '--temporal-namespace', 'default']);
    expect(services['worker-io'].environment.WORKER_QUEUES).to.equal('io,llm');
    expect(services['worker-media'].environment.WORKER_QUEUES).to.equal('media');
    for (const name of ['api-1', 'api-2', 'worker-io', 'worker-media']) {
      expect(services[name].healthcheck.test, name).to.be.an('array');
      expect(services[name].volumes, name).to.have.length(1);
    }
    // No shared state between the replicas: each its own volume.
    const source = (v: string | { source: string }) => (typeof v === 'string' ? v.split(':')[0] : v.source);
    expect(source(services['api-1'].volumes[0])).to.not.equal(source(services['api-2'].volumes[0]));
  });

  it("every variable of the service's containers is in the config schema and loads; others are the images' own", () => {
    const known = new Set(Object.keys(configSchema.shape));
    for (const [name, s] of Object.entries(services)) {
      const env: Record<string, string> = Object.fromEntries(
        Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]),
      );
      if (String(s.image).startsWith('docproc:')) {
        const unknown = Object.keys(env).filter((k) => !known.has(k));
        expect(unknown, `${name}: not in core/config/config.ts`).to.deep.equal([]);
        const config = loadConfig(env);
        expect(config.STORAGE, name).to.equal('s3');
        expect(config.loopbackOnly && !config.SERVICE_API_KEY, `${name} listens beyond loopback with a key`).to.equal(
          false,
        );
        expect(config.temporalAddress, name).to.equal('temporal:7233');
        // The same outbound policy in every container, the workers (no HOST) as the APIs: private targets refused.
        expect(outboundPolicy(config).allowPrivate, `${name} allows private targets`).to.equal(false);
      } else {
        const image = Object.keys(THIRD_PARTY).find((i) => String(s.image).startsWith(`${i}:`));
        expect(image, `${name}: an image this test knows (${s.image})`).to.be.a('string');
        const command = JSON.stringify(s.command ?? '');
        const undocumented = Object.keys(env).filter(
          (k) => !THIRD_PARTY[image!].includes(k) && !command.includes(`$${k}`),
        );
        expect(
          undocumented,
          `${name}: variables ${s.image} does not document and its command does not use`,
        ).to.deep.equal([]);
      }
    }
  });

  it('runs the Temporal server with task-queue fairness on, from the dynamic config file it mounts', () => {
    const t = services.temporal;
    const mounted = (t.volumes ?? []).map((v: string | { source: string; target: string }) =>
      typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v,
    );
    // The image reads DYNAMIC_CONFIG_FILE_PATH relative to its working directory, /etc/temporal.
    const target = path.posix.join('/etc/temporal', String(t.environment.DYNAMIC_CONFIG_FILE_PATH));
    const file = mounted.find((m: { target: string }) => m.target === target);
    expect(file, `a volume mounted at ${target}`).to.not.equal(undefined);
    const settings = parse(fs.readFileSync(path.resolve(ROOT, file.source), 'utf8'));
    expect(settings['matching.enableFairness']).to.deep.equal([{ value: true }]);
    expect(settings['matching.useNewMatcher']).to.deep.equal([{ value: true }]);
  });

  it('names every variable of the configuration table, docs/configuration.md (set, or said why not)', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    const table = doc.slice(doc.indexOf('# Configuration'));
    const names = [...table.matchAll(/^\| ((?:`[A-Z0-9_]+`(?:, )?)+) \|/gm)].flatMap((m) => m[1].match(/[A-Z0-9_]+/g)!);
    expect(names.length).to.be.greaterThan(60);
    const file = fs.readFileSync(COMPOSE_FILE, 'utf8');
    expect(names.filter((n) => !new RegExp(`\\b${n}\\b`).test(file))).to.deep.equal([]);
  });
});
