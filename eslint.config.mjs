// ESLint as a guard rail (`npm run lint`, run by `npm test` after the typecheck and the formatter's check): typed
// promise rules, and architecture.md's arrows as import boundaries per folder. Style is prettier's, not ESLint's.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const ROOT = import.meta.dirname;

/** A relative import of a top-level folder of this repository, seen from anywhere inside it. */
const folder = (name) => `^\\.{1,2}/(.*/)?${name}(/.*)?$`;

/** Node's built-in modules, with and without `node:`. */
const NODE_BUILTINS = `^(node:.*|(${builtinModules.map((m) => m.replace(/[/]/g, '\\/')).join('|')})(/.*)?)$`;

/**
 * Packages a workflow may load at run time: Temporal's workflow side and libraries that are plain JavaScript. The
 * sandbox has no Node built-ins, so anything else (pino, prom-client, yazl, cheerio, the Temporal client...) is
 * taken as unsafe.
 */
const SANDBOX_PACKAGES = new Set(['@temporalio/workflow', '@temporalio/common', 'zod', 'yaml']);

/**
 * The modules of core/ a workflow must not import at run time: those that import (directly or through other core
 * modules) a Node built-in or a package outside `SANDBOX_PACKAGES`. Computed from the sources on each run, so a core
 * module that starts using `node:crypto` is refused in workflows/ from then on. `import type` is erased and ignored.
 */
function coreModulesUnsafeInSandbox() {
  const coreDir = path.join(ROOT, 'core');
  const files = fs
    .readdirSync(coreDir, { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(coreDir, f));
  const importRe = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  const edges = new Map();
  const unsafe = new Set();
  for (const file of files) {
    const deps = [];
    for (const [, typeOnly, spec] of fs.readFileSync(file, 'utf8').matchAll(importRe)) {
      if (typeOnly) continue;
      if (spec.startsWith('.')) {
        const base = path.resolve(path.dirname(file), spec);
        const target = [`${base}.ts`, path.join(base, 'index.ts')].find((p) => fs.existsSync(p));
        if (target) deps.push(target);
      } else if (
        !SANDBOX_PACKAGES.has(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0])
      )
        unsafe.add(file);
    }
    edges.set(file, deps);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const [file, deps] of edges) {
      if (!unsafe.has(file) && deps.some((d) => unsafe.has(d))) {
        unsafe.add(file);
        grew = true;
      }
    }
  }
  return [...unsafe]
    .map((f) =>
      path
        .relative(coreDir, f)
        .replace(/\.ts$/, '')
        .replace(/\/index$/, ''),
    )
    .sort()
    .map((m) => m.replace(/[.]/g, '\\.'));
}

const rule = (regex, message, allowTypeImports = false) => ({ regex, message, allowTypeImports });

const onlyCore = [
  rule(folder('api'), 'core/ is shared by both sides: it imports nothing of api/.'),
  rule(folder('workflows'), 'core/ imports nothing of workflows/.'),
  rule(folder('activities'), 'core/ imports nothing of activities/.'),
  rule(
    folder('providers'),
    'core/ imports nothing of providers/ (a provider implements an interface domain/engines declares).',
  ),
  rule(folder('worker'), 'core/ imports nothing of worker/.'),
  rule(folder('domain'), 'core/ imports nothing of domain/ (domain code builds on core, not the reverse).'),
];
/** Node modules that do I/O or run processes and threads: what domain/ never does. */
const NODE_IO =
  '^(node:)?(fs|fs/promises|child_process|worker_threads|cluster|net|tls|http|https|http2|dgram|dns|readline)$';
const notApi = (who) => rule(folder('api'), `${who} imports nothing of api/ (the HTTP edge).`);
const notWorker = (who) => rule(folder('worker'), `${who} imports nothing of worker/ (its composition root).`);
/** The API reads workflows through their definitions (messages, state) and starts them by type. */
const apiToWorkflows = [
  rule(
    '^\\.{1,2}/(.*/)?workflows(?!/(definitions|job-state)$)(/.*)?$',
    'api/ imports from workflows/ only definitions.ts and job-state.ts; a workflow function only as a type ' +
      '(`import type`, start it by name).',
    true,
  ),
  rule(
    folder('activities'),
    'api/ imports nothing of activities/: the API starts workflows, the worker runs activities.',
  ),
  notWorker('api/'),
  rule('^@temporalio/(worker|activity|workflow)$', 'api/ talks to Temporal as a client (@temporalio/client) only.'),
];
const apiNotProviders = rule(
  folder('providers'),
  'api/ runs no engine: pure checks live in core/, engines reach the routes through createApp(deps) (api/main.ts ' +
    'builds them).',
);

/** What the workflow sandbox cannot load, and the folders workflows reach only through activities. */
const workflowSandbox = [
  rule(NODE_BUILTINS, 'Workflows run in a sandbox without Node built-ins: do it in an activity.', true),
  rule(
    `^\\.{1,2}/(.*/)?core/(${coreModulesUnsafeInSandbox().join('|')})$`,
    'This core module loads Node built-ins or a package the workflow sandbox cannot run: import its types only ' +
      '(`import type`), or move the pure part into a module of its own.',
    true,
  ),
  rule('^@temporalio/(client|worker|activity|testing)$', 'Workflows use @temporalio/workflow only.'),
  rule(
    folder('activities'),
    'Workflows import activity types only (`import type`): activities run in the worker, called through proxies.',
    true,
  ),
  rule(folder('providers'), 'Workflows call engines through activities, never directly.'),
  rule(
    folder('domain'),
    'Workflows reach domain code through activities: import its types only (`import type`).',
    true,
  ),
  notApi('workflows/'),
  notWorker('workflows/'),
];

const boundary = (files, patterns) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
});

/** Every `eslint-disable*` comment says why (`-- reason`), like eslint-comments/require-description, no plugin. */
const guardRails = {
  rules: {
    'disable-needs-reason': {
      meta: { type: 'problem', messages: { reason: 'Say why after `--`: `eslint-disable-next-line rule -- reason`.' } },
      create(context) {
        return {
          Program() {
            for (const c of context.sourceCode.getAllComments()) {
              if (/^\s*eslint-(disable|enable)/.test(c.value) && !/\s--\s*\S/.test(c.value))
                context.report({ loc: c.loc, messageId: 'reason' });
            }
          },
        };
      },
    },
  },
};

export default defineConfig(
  { ignores: ['node_modules/**', '.data/**', 'samples/**', 'templates/**', 'licenses/**', '**/*.d.ts'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: ROOT },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, docproc: guardRails },
    rules: {
      'docproc/disable-needs-reason': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  boundary(['core/**/*.ts'], onlyCore),
  boundary(
    ['providers/**/*.ts'],
    [
      rule(
        '^@temporalio/',
        'providers/ know nothing of Temporal: heartbeats, cancellation and failures are mapped in activities/.',
      ),
      notApi('providers/'),
      notWorker('providers/'),
      rule(folder('workflows'), 'providers/ import nothing of workflows/.'),
      rule(
        folder('activities'),
        'providers/ import nothing of activities/ (activities call providers, not the reverse).',
      ),
    ],
  ),
  boundary(
    ['domain/**/*.ts'],
    [
      rule(
        folder('providers'),
        'domain/ is pure: it imports nothing of providers/ (providers implement domain/engines and call domain code).',
      ),
      rule(folder('activities'), 'domain/ imports nothing of activities/ (activities call domain code).'),
      rule(folder('workflows'), 'domain/ imports nothing of workflows/.'),
      notApi('domain/'),
      notWorker('domain/'),
      rule(folder('llm-server'), 'domain/ imports nothing of llm-server/.'),
      rule('^@temporalio/', 'domain/ knows nothing of Temporal.'),
      rule(NODE_IO, 'domain/ is pure: no files, processes, threads or network (that is an adapter, in providers/).'),
    ],
  ),
  boundary(
    ['activities/**/*.ts'],
    [
      notApi('activities/'),
      notWorker('activities/'),
      rule(
        '^\\.{1,2}/(.*/)?workflows(?!/definitions$)(/.*)?$',
        'activities/ import from workflows/ only definitions.ts (the messages they signal and query); the rest as ' +
          'types only.',
        true,
      ),
    ],
  ),
  boundary(['workflows/**/*.ts'], workflowSandbox),
  boundary(['api/**/*.ts'], [...apiToWorkflows, apiNotProviders]),
  // The API process's composition root builds the providers, as worker/main.ts does for the worker.
  boundary(['api/main.ts'], apiToWorkflows),
  boundary(['worker/**/*.ts'], [notApi('worker/')]),
  // One module per capability, called by its activity and by the API's own answer: engines only through interfaces.
  boundary(
    ['capabilities/**/*.ts'],
    [
      notApi('capabilities/'),
      notWorker('capabilities/'),
      rule(folder('activities'), 'capabilities/ are called by activities and the API, never the reverse.'),
      rule(folder('workflows'), 'capabilities/ know nothing of workflows/.'),
      rule(folder('providers'), 'capabilities/ call engines through the interfaces their callers hand them.'),
      rule('^@temporalio/', 'capabilities/ know nothing of Temporal: their callers map failures.'),
    ],
  ),
  boundary(
    ['llm-server/**/*.ts'],
    [
      notApi('llm-server/'),
      notWorker('llm-server/'),
      rule(folder('workflows'), 'The model server knows nothing of Temporal.'),
      rule(folder('activities'), 'The model server knows nothing of Temporal.'),
    ],
  ),
);
