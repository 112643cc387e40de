import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { jobSearchAttributes } from '../../core/runtime/search-attributes';
import { pingWorkflow } from '../../workflows/ping.workflow';
import { spawnProc } from '../support/servers/processes';
import { waitFor } from '../support/wait';
import { sharedDevServer } from '../support/servers/engines';

/** `npm run setup -- --temporal-namespace <ns>` against a namespace created without the project's search attributes. */
describe('npm run setup -- --temporal-namespace', function () {
  this.timeout(120_000);
  let address: string;
  let connection: Connection;
  before(async () => {
    address = (await sharedDevServer()).address;
    connection = await Connection.connect({ address });
  });
  after(async () => connection?.close());

  const setup = async (...args: string[]) => {
    const p = spawnProc(process.execPath, ['scripts/setup.mjs', ...args], {
      TEMPORAL_ADDRESS: address,
      LOG_LEVEL: 'silent',
    });
    return { code: await p.exited, out: p.output() };
  };

  it('registers JobType, JobStatus, BatchId and UserId once, a second run changes nothing, and jobs can start with them', async () => {
    const namespace = `setup-${randomUUID().slice(0, 8)}`;
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // The frontend knows a new namespace once its namespace cache refreshed.
    await waitFor(
      async () => ((await connection.operatorService.listSearchAttributes({ namespace })) ? true : undefined),
      'the new namespace',
      60_000,
      500,
    );
    const before = await connection.operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(before.customAttributes ?? {})).not.to.include('JobType');

    const first = await setup('--temporal-namespace', namespace);
    expect(first.code, first.out).to.equal(0);
    expect(first.out).to.include(
      `namespace ${namespace}: added JobType, JobStatus, BatchId, UserId; already there none`,
    );
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    for (const name of ['JobType', 'JobStatus', 'BatchId', 'UserId']) {
      expect(listed.customAttributes?.[name], name).to.equal(
        temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      );
    }

    const second = await setup(`--temporal-namespace=${namespace}`);
    expect(second.code, second.out).to.equal(0);
    expect(second.out).to.include(
      `namespace ${namespace}: added none; already there JobType, JobStatus, BatchId, UserId`,
    );

    // A job start with the typed attributes is accepted in the namespace (it is refused while they are unknown).
    const client = new Client({ connection, namespace });
    const handle = await client.workflow.start(pingWorkflow, {
      taskQueue: `setup-${randomUUID()}`,
      workflowId: `setup-${randomUUID()}`,
      args: [{ ioQueue: 'none', mediaQueue: 'none' }],
      typedSearchAttributes: jobSearchAttributes({ jobType: 'pdf', batchId: 'batch-1', userId: 'u1' }),
    });
    await handle.terminate('test done');
  });

  it('fails clearly for a namespace that does not exist, and without arguments prints the usage', async () => {
    const absent = `absent-${randomUUID().slice(0, 8)}`;
    const missing = await setup('--temporal-namespace', absent);
    expect(missing.code).to.equal(1);
    expect(missing.out).to.include(`[setup] 5 NOT_FOUND: Namespace ${absent} is not found.`);
    const bare = await setup();
    expect(bare.code).to.equal(1);
    expect(bare.out).to.include('usage: npm run setup -- --temporal-namespace <namespace> | --engines');
  });
});
