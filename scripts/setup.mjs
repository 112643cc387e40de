// `npm run setup -- <what>`: operator and image set-up steps that `npm start` does not do on its own.
//   --temporal-namespace <ns>  registers the project's search attributes on an existing namespace (idempotent), with
//                              the same TEMPORAL_* connection settings as the API and worker (address, TLS, mTLS, key)
//   --engines                  provisions the runtime engines without touching node_modules (the Docker image build):
//                              checks the Debian tools, sets up the speech venv (faster-whisper, yt-dlp) and model
import { ensureDebian, RUNTIME_PACKAGES, step } from './engines.mjs';
import { ensureSpeech } from './engines-speech.mjs';

const USAGE = 'usage: npm run setup -- --temporal-namespace <namespace> | --engines';

function parseArgs(argv) {
  const opts = { namespace: undefined, engines: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--engines') opts.engines = true;
    else if (a === '--temporal-namespace') opts.namespace = argv[++i];
    else if (a.startsWith('--temporal-namespace=')) opts.namespace = a.slice('--temporal-namespace='.length);
    else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  if (opts.namespace !== undefined && !opts.namespace)
    throw new Error(`--temporal-namespace needs a namespace\n${USAGE}`);
  if (!opts.engines && !opts.namespace) throw new Error(USAGE);
  return opts;
}

async function registerNamespace(namespace) {
  // The TypeScript modules (config, connection options, the workflows' attribute keys) through tsx.
  const { tsImport } = await import('tsx/esm/api');
  const [{ loadConfig }, { temporalConnectionOptions }, { registerSearchAttributes }, { Connection }] =
    await Promise.all([
      tsImport('../core/config/config.ts', import.meta.url),
      tsImport('../core/runtime/temporal-connection.ts', import.meta.url),
      tsImport('../worker/search-attributes.ts', import.meta.url),
      import('@temporalio/client'),
    ]);
  const config = loadConfig();
  step('temporal', `registering search attributes on namespace ${namespace} at ${config.temporalAddress}`);
  const connection = await Connection.connect({ ...temporalConnectionOptions(config), connectTimeout: 10_000 });
  try {
    const r = await registerSearchAttributes(connection, namespace);
    step(
      'temporal',
      `namespace ${namespace}: added ${r.added.join(', ') || 'none'}; already there ${r.present.join(', ') || 'none'}`,
    );
  } finally {
    await connection.close();
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.engines) {
    await ensureDebian(RUNTIME_PACKAGES, { label: 'tools', required: true });
    const speech = await ensureSpeech({ model: 'base' });
    step('speech', `python ${speech.python}, model ${speech.modelDir}`);
  }
  if (opts.namespace) await registerNamespace(opts.namespace);
}

main().catch((err) => {
  process.stderr.write(`[setup] ${err?.message ?? err}\n`);
  process.exit(1);
});
