import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { useLlmStack } from '../support/servers/llm-env';
import type { LlmServer } from '../support/servers/llm-server';
import { Client, Connection } from '@temporalio/client';
import { sharedDevServer } from '../support/servers/engines';
import { responseChecker } from '../support/clients/openapi-schemas';
import { postMultipart } from '../support/clients/pdf-http';
import { buildPdf, wrapText } from '../support/documents/pdf-factory';
import { pdfJob, transformerJob, until } from '../support/jobs';
import { newJobId } from '../../core/jobs/ids';
import { writeBlobJson } from '../../core/stores/blob-store';
import { indexJob } from '../../core/stores/job-index';
import { jobCacheRefPrefix, jobPrefix, jobRecordKey } from '../../core/stores/records';

// GET /api/jobs and /api/jobs/batches and the job actions of contract §15 (restart, cancel, delete), on the real API
// and worker over loopback HTTP on the shared Temporal dev server; a held answer of the OpenAI-compatible test server
// keeps a job running for as long as a test needs it. Jobs past Temporal's retention are records without a workflow:
// the store's records from before the index and the few hundred stored jobs below are exactly that.

const UNKNOWN_JOB = 'job-00000000-0000-4000-8000-000000000000';
const DAY = 86_400_000;

/** A finished job's record as a store holds it long after its run (the fields a record has). */
function storedRecord(o: {
  job_id: string;
  job_type: string;
  status: 'completed' | 'failed';
  created_at: string;
  user_id?: string;
}) {
  return {
    job_id: o.job_id,
    job_type: o.job_type,
    status: o.status,
    created_at: o.created_at,
    updated_at: new Date(Date.parse(o.created_at) + 1000).toISOString(),
    parameters: {},
    ...(o.user_id ? { user_id: o.user_id } : {}),
    progress:
      o.status === 'completed'
        ? { step: 'completed', percent: 100, message: 'Done' }
        : { step: 'failed', percent: 10, message: 'Failed' },
    results: null,
    logs: [],
    ...(o.status === 'failed' ? { error: { code: 'UPSTREAM_ERROR', message: 'gone', details: {} } } : {}),
    events: [],
    version: 3,
    run: 1,
  };
}

describe('the job list and the job actions (contract §15)', function () {
  this.timeout(180_000);
  let s: Stack;
  let llm: LlmServer;
  let check: ReturnType<typeof responseChecker>;
  let connection: Connection;
  let client: Client;
  /** Records written before any listing, without index entries: a store from before the index. */
  const legacy: string[] = [];

  useLlmStack(
    (stack, server) => {
      s = stack;
      llm = server;
    },
    { LLM_TIMEOUT_MS: '120000' },
  );

  before(async () => {
    check = responseChecker((await s.call('GET', '/api/openapi.json')).body);
    connection = await Connection.connect({ address: (await sharedDevServer()).address });
    client = new Client({ connection });
    for (let i = 0; i < 3; i++) {
      const id = newJobId();
      legacy.push(id);
      const rec = storedRecord({
        job_id: id,
        job_type: 'transformer',
        status: 'completed',
        created_at: `2021-03-0${i + 1}T10:00:00.000Z`,
      });
      await writeBlobJson(s.api.store, jobRecordKey(id), rec);
    }
  });
  after(async () => connection?.close());

  /** A GET of a listing, checked against its documented schema. */
  async function get(path: string, template: string): Promise<{ status: number; body: any }> {
    const r = await s.call('GET', path);
    expect(check('GET', template, r.status, r.body), `${path} ${r.status}: ${JSON.stringify(r.body)}`).to.deep.equal(
      [],
    );
    return r;
  }
  const list = (query: string) => get(`/api/jobs?${query}`, '/api/jobs');

  /** Every page of a listing, `limit` at a time: the jobs in order and how many pages it took. */
  async function allPages(query: string, limit: number, key: 'jobs' | 'batches' = 'jobs') {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r: { status: number; body: any } =
        key === 'jobs' ? await list(q) : await get(`/api/jobs/batches?${q}`, '/api/jobs/batches');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const page = r.body.data[key];
      expect(page.length).to.be.at.most(limit);
      if (r.body.data.next_cursor !== null) expect(page.length, 'a page before the last is full').to.equal(limit);
      items.push(...page);
      cursor = r.body.data.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 500);
    return { items, pages };
  }
  const ids = (items: { job_id: string }[]) => items.map((j) => j.job_id);

  async function create(body: unknown): Promise<string> {
    const r = await s.call('POST', '/api/jobs/', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.data.job_id;
  }

  /** Jobs of two types and three users, one failed, and a batch of two: all finished. */
  const made: Record<string, string> = {};
  let batchId = '';
  async function makeJobs(): Promise<void> {
    if (batchId) return;
    made.a1 = await create({ ...transformerJob('<p>a1</p>'), user_id: 'alice' });
    made.a2 = await create({ ...transformerJob('<p>a2</p>'), user_id: 'alice' });
    made.b1 = await create({ ...pdfJob(), user_id: 'bob' }); // no such file: fails
    made.a3 = await create({ ...transformerJob('<p>a3</p>'), user_id: 'alice' });
    made.n1 = await create(transformerJob('<p>nobody</p>'));
    const b = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'listed',
      user_id: 'carol',
      jobs: [transformerJob('<p>c1</p>'), transformerJob('<p>c2</p>')],
    });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    batchId = b.body.data.batch_id;
    [made.c1, made.c2] = ids(b.body.data.batch.jobs);
    for (const id of Object.values(made)) await s.waitJob(id, 60_000);
    await until(
      async () =>
        (await s.call('GET', `/api/jobs/batch/${batchId}`)).body.data.status === 'completed' ? true : undefined,
      'the batch to complete',
    );
  }

  it('lists jobs newest first, with each filter, summaries as GET reads them, past jobs from their records', async () => {
    await makeJobs();
    const mine = new Set(Object.values(made));
    const { items: everything } = await allPages('', 200);
    const listed = everything.filter((j) => mine.has(j.job_id));
    expect(listed.length, 'every job created is listed').to.equal(mine.size);
    const times = everything.map((j) => j.created_at);
    expect(times, 'newest first').to.deep.equal([...times].sort().reverse());
    expect(ids(listed).slice(0, 5)).to.deep.equal([
      ...[made.c1, made.c2].sort(), // one batch: created together, in id order
      made.n1,
      made.a3,
      made.b1,
    ]);
    expect(ids(listed).slice(5)).to.deep.equal([made.a2, made.a1]);
    // The store's records from before the index are listed too (indexed at the first listing), oldest last.
    expect(ids(everything).slice(-3)).to.deep.equal([...legacy].reverse());

    for (const j of listed) {
      const one = (await s.call('GET', `/api/jobs/${j.job_id}`)).body.data;
      expect(j).to.deep.equal({
        job_id: one.job_id,
        job_type: one.job_type,
        status: one.status,
        progress: one.progress,
        created_at: one.created_at,
        updated_at: one.updated_at,
        batch_id: one.batch_id ?? null,
        user_id: one.user_id ?? null,
        error_code: one.error?.code ?? null,
      });
    }
    const failed = listed.find((j) => j.job_id === made.b1);
    expect(failed).to.include({ status: 'failed', error_code: 'FILE_NOT_FOUND', job_type: 'pdf', user_id: 'bob' });
    expect(listed.find((j) => j.job_id === made.c1)).to.include({ batch_id: batchId, user_id: 'carol' });
    expect(listed.find((j) => j.job_id === made.n1)).to.include({ batch_id: null, user_id: null, error_code: null });

    const only = async (query: string) =>
      ids((await allPages(query, 200)).items).filter((id) => mine.has(id) || legacy.includes(id));
    expect(await only('status=failed')).to.deep.equal([made.b1]);
    expect(await only('status=completed')).to.deep.equal(
      ids(everything).filter((id) => id !== made.b1 && (mine.has(id) || legacy.includes(id))),
    );
    expect(await only('status=processing')).to.deep.equal([]);
    expect(await only('job_type=pdf')).to.deep.equal([made.b1]);
    expect(await only('user_id=alice')).to.deep.equal([made.a3, made.a2, made.a1]);
    expect(await only(`batch_id=${batchId}`)).to.deep.equal([made.c1, made.c2].sort());
    expect(await only('user_id=alice&job_type=transformer&status=completed')).to.deep.equal([
      made.a3,
      made.a2,
      made.a1,
    ]);
    expect(await only('user_id=bob&status=completed')).to.deep.equal([]);
    const a2 = listed.find((j) => j.job_id === made.a2).created_at;
    const from = encodeURIComponent(a2);
    expect(await only(`user_id=alice&created_after=${from}`)).to.deep.equal([made.a3, made.a2]);
    expect(await only(`user_id=alice&created_before=${from}`)).to.deep.equal([made.a1]);
    expect(await only('created_before=2021-03-03T00:00:00%2B00:00')).to.deep.equal([legacy[1], legacy[0]]);

    // Two at a time to the end: every job once, none missing, in the same order.
    const paged = await allPages('', 2);
    expect(ids(paged.items)).to.deep.equal(ids(everything));
    expect(paged.pages).to.equal(Math.ceil(everything.length / 2));
    const pagedFiltered = await allPages('job_type=transformer&user_id=alice', 2);
    expect(ids(pagedFiltered.items)).to.deep.equal([made.a3, made.a2, made.a1]);
    expect(pagedFiltered.pages).to.equal(2);
  });

  it('refuses a bad filter, limit or cursor with a 400 naming it', async () => {
    const first = await list('limit=1');
    const cursor = encodeURIComponent(first.body.data.next_cursor);
    expect(first.body.data.next_cursor).to.be.a('string');
    const cases: [string, string][] = [
      ['status=done', 'status'],
      ['job_type=nope', 'job_type'],
      ["batch_id=batch-1'%20OR%201=1", 'batch_id'],
      ['created_after=yesterday', 'created_after'],
      ['created_before=2025-13-01T00:00:00Z', 'created_before'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`status=failed&cursor=${cursor}`, 'cursor'],
      ['user_id=', 'user_id'],
    ];
    for (const [query, field] of cases) {
      const r = await s.call('GET', `/api/jobs?${query}`);
      expect(r.status, `${query}: ${JSON.stringify(r.body)}`).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_ERROR');
      expect(
        r.body.error.details.issues.map((i: { path: string }) => i.path),
        query,
      ).to.deep.equal([field]);
      expect(r.body.error.message, query).to.include(field);
    }
    const bad = await s.call('GET', '/api/jobs/batches?status=failed');
    expect([bad.status, bad.body.error.details.issues[0].path]).to.deep.equal([400, 'status']);
    const jobCursor = await s.call('GET', `/api/jobs/batches?cursor=${cursor}`);
    expect([jobCursor.status, jobCursor.body.error.details.issues[0].path]).to.deep.equal([400, 'cursor']);
    expect((await s.call('GET', `/api/jobs?cursor=${cursor}`)).status, 'the same listing takes it').to.equal(200);
    const slash = await s.call('GET', '/api/jobs/?limit=1');
    expect([slash.status, slash.body.data?.jobs?.length]).to.deep.equal([200, 1]);
  });

  it('restarts a failed job (POST /api/jobs/{job_id}/restart), and refuses a completed or unknown one', async () => {
    await makeJobs();
    const r = await s.call('POST', `/api/jobs/${made.b1}/restart`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(check('POST', '/api/jobs/{job_id}/restart', 200, r.body)).to.deep.equal([]);
    expect(r.body.data).to.deep.equal({ job_id: made.b1, status: 'pending', message: 'Job restarted' });
    const again = await s.waitJob(made.b1, 60_000);
    expect([again.status, again.error.code]).to.deep.equal(['failed', 'FILE_NOT_FOUND']);
    expect(again.logs.some((l: { message: string }) => l.message === 'Job restarted')).to.equal(true);

    const done = await s.call('POST', `/api/jobs/${made.a1}/restart`);
    expect([done.status, done.body.error.code, done.body.error.details.status]).to.deep.equal([
      409,
      'INVALID_STATE',
      'completed',
    ]);
    const unknown = await s.call('POST', `/api/jobs/${UNKNOWN_JOB}/restart`);
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'JOB_NOT_FOUND']);
  });

  it('cancels a running job: listed live while it runs, failed with CANCELLED after, then restarted to completion', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    llm.respond(async () => {
      await held;
      return undefined;
    });
    try {
      const id = await create({
        job_type: 'transformer',
        parameters: { operation: 'summarize', text: 'Ein Text, der warten muss.', use_cache: false },
        user_id: 'dora',
      });
      await until(async () => (llm.chatRequests().length > 0 ? true : undefined), 'the model call to start', 60_000);
      const live = (await s.call('GET', `/api/jobs/${id}`)).body.data;
      expect(live.status).to.equal('processing');
      const running = (await list('status=processing')).body.data.jobs;
      expect(ids(running)).to.deep.equal([id]);
      expect(running[0]).to.include({ status: 'processing', user_id: 'dora' });
      expect(running[0].progress).to.deep.equal(live.progress);
      expect(ids((await list('status=pending')).body.data.jobs)).to.deep.equal([]);

      const busy = await s.call('DELETE', `/api/jobs/${id}`);
      expect([busy.status, busy.body.error.code]).to.deep.equal([409, 'INVALID_STATE']);

      const c = await s.call('POST', `/api/jobs/${id}/cancel`);
      expect(c.status, JSON.stringify(c.body)).to.equal(200);
      expect(check('POST', '/api/jobs/{job_id}/cancel', 200, c.body)).to.deep.equal([]);
      expect(c.body.data).to.include({ job_id: id, status: 'failed' });
      const failed = (await s.call('GET', `/api/jobs/${id}`)).body.data;
      expect([failed.status, failed.error.code]).to.deep.equal(['failed', 'CANCELLED']);
      const listed = (await list('status=failed&user_id=dora')).body.data.jobs;
      expect(listed.map((j: any) => [j.job_id, j.error_code])).to.deep.equal([[id, 'CANCELLED']]);

      const twice = await s.call('POST', `/api/jobs/${id}/cancel`);
      expect([twice.status, twice.body.error.code, twice.body.error.details.status]).to.deep.equal([
        409,
        'INVALID_STATE',
        'failed',
      ]);
      const unknown = await s.call('POST', `/api/jobs/${UNKNOWN_JOB}/cancel`);
      expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'JOB_NOT_FOUND']);

      const r = await s.call('POST', `/api/jobs/${id}/restart`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      release();
      const done = await s.waitJob(id, 60_000);
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
      expect(ids((await list('status=completed&user_id=dora')).body.data.jobs)).to.deep.equal([id]);
    } finally {
      release();
    }
  });

  it('deletes a finished job: its record, outputs, upload and cache entry go, it is unknown and unlisted after', async () => {
    const pdf = buildPdf({ pages: [{ kind: 'lines', size: 16, lines: wrapText('Deleted page. Nothing stays.', 50) }] });
    const r = await postMultipart(
      `${s.url}/api/pdf/process?wait_ms=0`,
      { extraction_method: 'native' },
      { bytes: pdf, name: 'delete-me.pdf', type: 'application/pdf' },
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const id: string = r.body.data.job_id;
    const job = await s.waitJob(id, 60_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('completed');
    const store = s.api.store;
    const upload = job.parameters.file_key as string;
    expect(upload).to.match(new RegExp(`^uploads/.*/${id}\\.pdf$`));
    const folder = await store.listKeys(jobPrefix(id));
    expect(folder.some((k) => k.includes('/out/'))).to.equal(true);
    const refs = await store.listKeys(jobCacheRefPrefix(id));
    expect(refs.length, 'the result cache entry is noted for the job').to.equal(1);
    const [operation, key] = refs[0]!.slice(refs[0]!.lastIndexOf('/') + 1).split('.');
    const entryKey = `cache/${operation}/${key}.json`;
    expect(await store.stat(entryKey)).to.not.equal(null);
    expect(await store.stat(upload)).to.not.equal(null);

    const d = await s.call('DELETE', `/api/jobs/${id}`);
    expect(d.status, JSON.stringify(d.body)).to.equal(200);
    expect(check('DELETE', '/api/jobs/{job_id}', 200, d.body)).to.deep.equal([]);
    expect(d.body.data).to.deep.equal({ job_id: id, deleted: true, message: 'Job deleted' });

    const after = await s.call('GET', `/api/jobs/${id}`);
    expect([after.status, after.body.error.code]).to.deep.equal([404, 'JOB_NOT_FOUND']);
    expect(ids((await allPages('', 200)).items)).to.not.include(id);
    expect(ids((await list('job_type=pdf')).body.data.jobs)).to.not.include(id);
    expect(await store.listKeys(jobPrefix(id)), 'the job folder').to.deep.equal([]);
    expect(await store.stat(jobRecordKey(id)), 'the record').to.equal(null);
    expect(await store.stat(upload), 'the upload').to.equal(null);
    expect(await store.stat(entryKey), 'the cache entry').to.equal(null);
    expect(await store.listKeys(jobCacheRefPrefix(id)), 'its marker').to.deep.equal([]);
    expect(
      (await store.listKeys('records/job-index/')).filter((k) => k.includes(id)),
      'index entries',
    ).to.deep.equal([]);
    // The same document again is read afresh, not answered from the deleted job's files.
    const again = await postMultipart(
      `${s.url}/api/pdf/process`,
      { extraction_method: 'native' },
      {
        bytes: pdf,
        name: 'again.pdf',
        type: 'application/pdf',
      },
    );
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.headers.get('x-cache')).to.not.equal('hit');
    expect(again.body.data.extracted_text).to.include('Deleted page.');

    const twice = await s.call('DELETE', `/api/jobs/${id}`);
    expect([twice.status, twice.body.error.code]).to.deep.equal([404, 'JOB_NOT_FOUND']);
    expect((await s.call('DELETE', `/api/jobs/${UNKNOWN_JOB}`)).status).to.equal(404);

    // Temporal deletes the job's history in the background (the dev server within about half a minute).
    await until(
      () =>
        client.workflow
          .getHandle(id)
          .describe()
          .then(
            () => undefined,
            (e: Error) => (e.name === 'WorkflowNotFoundError' ? true : undefined),
          ),
      'Temporal to delete the job’s workflow',
      120_000,
      500,
    );
  });

  it('pages through a few hundred jobs past retention (records, no workflow) over several days, filters and bounds exact', async () => {
    // Finished jobs as a store keeps them past retention (records and index entries as their writers leave them; no
    // workflow): 300 over three days of 2022, two types, three users, every seventh one failed.
    const store = s.api.store;
    const base = Date.parse('2022-06-10T00:00:00.000Z');
    const synthetic = Array.from({ length: 300 }, (_, i) =>
      storedRecord({
        job_id: newJobId(),
        job_type: i % 3 === 0 ? 'pdf' : 'transformer',
        status: i % 7 === 0 ? 'failed' : 'completed',
        created_at: new Date(base + i * (DAY / 100) + (i % 5)).toISOString(),
        ...(i % 4 === 0 ? {} : { user_id: ['erin', 'frank', 'grace'][i % 3] }),
      }),
    );
    for (const rec of synthetic) {
      await indexJob(store, rec);
      await writeBlobJson(store, jobRecordKey(rec.job_id), rec);
    }
    const newestFirst = [...synthetic].reverse();
    const expected = (f: (r: (typeof synthetic)[number]) => boolean) => newestFirst.filter(f).map((r) => r.job_id);
    const within = (items: any[]) => ids(items).filter((id) => synthetic.some((r) => r.job_id === id));
    const window = 'created_after=2022-01-01T00:00:00Z&created_before=2023-01-01T00:00:00Z';

    const all = await allPages(window, 37);
    expect(ids(all.items)).to.deep.equal(expected(() => true));
    expect(all.pages).to.equal(Math.ceil(300 / 37));
    expect(new Set(ids(all.items)).size).to.equal(300);

    const cases: [string, (r: (typeof synthetic)[number]) => boolean][] = [
      ['status=failed', (r) => r.status === 'failed'],
      ['job_type=pdf&status=completed', (r) => r.job_type === 'pdf' && r.status === 'completed'],
      ['user_id=frank', (r) => r.user_id === 'frank'],
      ['user_id=grace&job_type=transformer', (r) => r.user_id === 'grace' && r.job_type === 'transformer'],
      [
        'created_after=2022-06-11T00:00:00Z&created_before=2022-06-12T12:00:00Z',
        (r) => r.created_at >= '2022-06-11T00:00:00.000Z' && r.created_at < '2022-06-12T12:00:00.000Z',
      ],
      ['created_before=2022-06-10T05:00:00.000Z', (r) => r.created_at < '2022-06-10T05:00:00.000Z'],
    ];
    for (const [query, f] of cases) {
      const want = expected(f);
      expect(want.length, query).to.be.greaterThan(0);
      const got = await allPages(`${query.includes('created') ? '' : `${window}&`}${query}`, 23);
      expect(within(got.items), query).to.deep.equal(want);
      expect(got.pages, query).to.equal(Math.max(1, Math.ceil(got.items.length / 23)));
    }
  });

  it('lists batches newest first (GET /api/jobs/batches, not taken for a job id), with their counts and filters', async () => {
    await makeJobs();
    const b2 = await s.call('POST', '/api/jobs/batch', {
      batch_name: 'second',
      jobs: [transformerJob('<p>x</p>'), pdfJob()],
    });
    expect(b2.status, JSON.stringify(b2.body)).to.equal(200);
    const second = b2.body.data.batch_id;
    for (const j of b2.body.data.batch.jobs) await s.waitJob(j.job_id, 60_000);
    const fetched = await until(async () => {
      const b = (await s.call('GET', `/api/jobs/batch/${second}`)).body.data;
      return b.status === 'completed' ? b : undefined;
    }, 'the second batch to complete');

    const { items } = await allPages('', 1, 'batches');
    expect(items.map((b) => b.batch_id)).to.deep.equal([second, batchId]);
    const shown = items[0];
    expect(shown).to.deep.include({
      batch_id: second,
      batch_name: 'second',
      status: 'completed',
      active: fetched.active,
      created_at: fetched.created_at,
      job_count: 2,
      completed_count: 1,
      failed_count: 1,
      pending_count: 0,
      processing_count: 0,
      user_id: null,
    });
    expect(items[1]).to.include({ batch_id: batchId, user_id: 'carol', completed_count: 2, job_count: 2 });
    const carol = await get('/api/jobs/batches?user_id=carol', '/api/jobs/batches');
    expect(carol.body.data.batches.map((b: any) => b.batch_id)).to.deep.equal([batchId]);
    const pending = await get('/api/jobs/batches?status=processing', '/api/jobs/batches');
    expect(pending.body.data).to.deep.equal({ batches: [], next_cursor: null });
  });
});
