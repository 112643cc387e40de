import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import {
  COMPOSE_STAND_INS,
  DATABASES,
  dynamicConfigYaml,
  HISTORY_SHARDS,
  POSTGRES_USER,
  serverConfigYaml,
  serverSettings,
  TEMPORAL_SERVICE_VARIABLES,
} from '../../scripts/cluster-server-config.mjs';
import { SERVER_PINS } from '../../scripts/engines-server.mjs';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../scripts/services.mjs';
import { ROOT } from '../support/servers/processes';

/**
 * `npm run cluster -- --temporal server` is the runnable stand-in for docker-compose.yml (issue #27): the two must
 * stay in step — the same services, the same versions of Temporal and its UI, the same variables with the same
 * defaults. Read from the compose file as written (its `${VAR:-default}` forms), no container runtime needed.
 */
const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'));
const services: Record<string, any> = compose.services;

/** `${NAME:-default}` → { name, default }; a literal → { literal }. */
function shellVar(value: unknown): { name?: string; default?: string; literal?: string } {
  const m = /^\$\{([A-Z0-9_]+)(?::-([^}]*))?\}$/.exec(String(value));
  return m ? { name: m[1], default: m[2] ?? '' } : { literal: String(value) };
}

describe('npm run cluster -- --temporal server and docker-compose.yml in step', () => {
  it('accounts for every service of the compose file', () => {
    expect(Object.keys(COMPOSE_STAND_INS).sort()).to.deep.equal(Object.keys(services).sort());
  });

  it('builds the Temporal server and UI of the versions the compose file runs, on PostgreSQL with the same plugin', () => {
    const tag = (service: string, image: string) => {
      const [name, version] = String(services[service].image).split(':');
      expect(name, service).to.equal(image);
      return version;
    };
    expect(SERVER_PINS.server.version).to.equal(tag('temporal', 'temporalio/auto-setup'));
    expect(SERVER_PINS.ui.version).to.equal(tag('temporal-ui', 'temporalio/ui'));
    expect(services.temporal.environment.DB).to.equal('postgres12');
    // The compose file's PostgreSQL (16) and Debian bookworm's (15) differ in major version; both are ones the
    // postgres12 plugin supports (12 and later), which is what the server's schemas need.
    const pgMajor = Number(/^(\d+)/.exec(tag('postgresql', 'postgres'))?.[1]);
    expect(pgMajor).to.be.at.least(12);
    const yaml = parse(
      serverConfigYaml({
        pgPort: 5432,
        password: 'p',
        dynamicConfigFile: '/x.yaml',
        ports: Object.fromEntries(
          [
            'frontend',
            'frontendHttp',
            'frontendMembership',
            'history',
            'historyMembership',
            'matching',
            'matchingMembership',
            'worker',
            'workerMembership',
          ].map((n, i) => [n, 20000 + i]),
        ),
      }),
    );
    expect(yaml.persistence.numHistoryShards).to.equal(HISTORY_SHARDS).and.be.greaterThan(1);
    for (const store of Object.values(yaml.persistence.datastores) as any[]) {
      expect(store.sql.pluginName).to.equal(services.temporal.environment.DB);
      expect(store.sql.user).to.equal(POSTGRES_USER);
    }
    expect(Object.values(yaml.persistence.datastores).map((s: any) => s.sql.databaseName)).to.deep.equal([
      DATABASES.temporal,
      DATABASES.visibility,
    ]);
  });

  it('runs the compose server with the dynamic config of the cluster layout and the dev server: fairness on', () => {
    const file = String(services.temporal.volumes[0]).split(':')[0];
    const composed = parse(fs.readFileSync(path.resolve(ROOT, file), 'utf8'));
    expect(composed).to.deep.equal(parse(dynamicConfigYaml()));
    expect(parse(dynamicConfigYaml())['matching.enableFairness']).to.deep.equal([{ value: true }]);
    // `npm start` and `npm run cluster` on the dev server pass the same settings as --dynamic-config-value.
    expect(DEV_SERVER_DYNAMIC_CONFIG).to.include({
      'matching.enableFairness': 'true',
      'matching.useNewMatcher': 'true',
    });
  });

  it("reads the temporal service's variables from the same shell variables, with the same defaults", () => {
    const env = services.temporal.environment as Record<string, string>;
    expect(Object.keys(TEMPORAL_SERVICE_VARIABLES).sort()).to.deep.equal(Object.keys(env).sort());
    const defaults = serverSettings({});
    for (const [name, how] of Object.entries(TEMPORAL_SERVICE_VARIABLES) as [string, any][]) {
      const v = shellVar(env[name]);
      if ('from' in how) {
        expect(v.name, name).to.equal(how.from);
        expect((defaults as any)[how.setting], `${name} default`).to.equal(v.default);
        expect((serverSettings({ [how.from]: 'set-here' }) as any)[how.setting], `${name} from ${how.from}`).to.equal(
          'set-here',
        );
      } else if (name === 'POSTGRES_USER' || name === 'DB') {
        expect(v.literal, name).to.equal(how.fixed);
      }
    }
    // The database's own user and password, as the postgresql service is given them.
    expect(services.postgresql.environment.POSTGRES_USER).to.equal(POSTGRES_USER);
    expect(shellVar(services.postgresql.environment.POSTGRES_PASSWORD)).to.deep.equal({
      name: 'POSTGRES_PASSWORD',
      default: defaults.password,
    });
    // The namespace the search attributes are registered on: the compose file's temporal-setup command.
    expect(services['temporal-setup'].command).to.deep.equal([
      'setup',
      '--temporal-namespace',
      `\${TEMPORAL_NAMESPACE:-${defaults.namespace}}`,
    ]);
  });
});
