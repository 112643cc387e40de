/**
 * Builds the workflow bundle and writes its code to the file named by the first argument (run by
 * `bundleWorkflowsApart`, worker/workflow-bundle.ts, as `node --import tsx worker/workflow-bundle.child.ts <file>`).
 */
import fs from 'node:fs/promises';
import { createLogger } from '../core/runtime/logger';
import { bundleWorkflows } from './workflow-bundle';

const out = process.argv[2];
if (!out) throw new Error('usage: workflow-bundle.child.ts <output file>');
const logger = createLogger('worker', process.env.LOG_LEVEL || 'info');
const bundle = await bundleWorkflows(logger);
await fs.writeFile(out, bundle.code);
