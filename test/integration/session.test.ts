import { expect } from 'chai';
// The stack (and with it api/openapi, which extends zod) is imported before anything that builds schemas.
import type { Stack } from '../support/servers/stack';
import { listSessionRecords, readSessionMarkdown } from '../../core/stores/session-store';
import { message, useLlmStack } from '../support/servers/llm-env';
import type { LlmRequest, LlmServer } from '../support/servers/llm-server';
import { responseChecker } from '../support/clients/openapi-schemas';
import { startSessionSite, type SessionSite } from '../support/servers/session-site';
import { startWebhookReceiver, type WebhookReceiver } from '../support/servers/webhook-receiver';

// Session processing (spec §4.6, contract §8, issue #15) through the real API, worker and Temporal dev server: the
// page through the SSRF-guarded download (loopback allowed: the test server listens on loopback only), the video
// through a `video` child job (ffmpeg and the local Whisper model), the attachments through `pdf` child jobs
// (poppler), the template through the OpenAI-compatible test server, the files on the local blob store.

const TEMPLATE_FIELDS = {
  title: 'Open maps for everyone',
  teaser: 'Volunteers map the city.',
  summary: 'A talk about mapping.',
  key_points: ['Maps are open'],
  discussion: '',
  links: [],
  topic: 'Open data',
  tags: ['maps', 'volunteering'],
};

/** Template calls answer fixed fields; everything else the server's default. */
function templateModel(llm: LlmServer): void {
  llm.respond((req) => (req.json?.response_format ? { content: JSON.stringify(TEMPLATE_FIELDS) } : undefined));
}
const templateCalls = (llm: LlmServer): LlmRequest[] => llm.chatRequests().filter((r) => r.json?.response_format);

describe('session processing (POST /api/session/*, legacy event jobs) on the real engines', function () {
  this.timeout(240_000);
  let s: Stack;
  let llm: LlmServer;
  let site: SessionSite;
  let hook: WebhookReceiver;
  const body = (name: string, extra: Record<string, unknown> = {}) => ({
    event: 'FOSDEM 2026',
    session: `Session ${name}`,
    url: `${site.base}/s/${name}`,
    filename: name,
    track: 'Geo spatial',
    day: '2026-02-01',
    starttime: '10:00',
    endtime: '10:30',
    speakers: ['Ada Lovelace', 'Grace Hopper'],
    source_language: 'en',
    target_language: 'en',
    ...extra,
  });
  const documented = (method: string, route: string, r: { status: number; body: any }) =>
    expect(
      responseChecker(s.api.app.openapi())(method, route, r.status, r.body),
      JSON.stringify(r.body).slice(0, 400),
    ).to.deep.equal([]);
  const download = async (p: string) => {
    const res = await fetch(`${s.url}/api/event-job/files/${p}`);
    return {
      status: res.status,
      type: res.headers.get('content-type') ?? '',
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };

  before(async function () {
    this.timeout(120_000);
    site = await startSessionSite();
    hook = await startWebhookReceiver();
  });
  useLlmStack((stack, server) => {
    s = stack;
    llm = server;
  });
  beforeEach(() => templateModel(llm));
  after(async () => {
    await site?.close();
    await hook?.close();
  });

  it('a full run writes the Markdown, page images, archive, session record and cached entry, every path downloadable', async () => {
    const r = await s.call(
      'POST',
      '/api/session/process',
      body('open-maps', {
        video_url: `${site.base}/talk.mp4`,
        attachments_url: `${site.base}/attachments`,
        create_archive: true,
      }),
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 800)).to.equal(200);
    documented('post', '/api/session/process', r);
    const out = r.body.data.output;
    const jobId = /^jobs\/(job-[0-9a-f-]+)\/out\//.exec(out.markdown_file)?.[1];
    expect(jobId, out.markdown_file).to.be.a('string');
    expect(out.markdown_file).to.equal(`jobs/${jobId}/out/sessions/FOSDEM_202026/en/Geo_20spatial/open-maps.md`);
    expect(out.target_dir).to.equal(`jobs/${jobId}/out/sessions/FOSDEM_202026/en/Geo_20spatial`);
    expect(r.body.data.markdown_file).to.equal(out.markdown_file);
    // The page's main content, not its chrome, and what the child jobs read.
    expect(out.video_transcript.toLowerCase()).to.match(/park|children|bridge/);
    expect(out.attachments_text).to.include(site.slides[0]).and.include(site.slides[1]);
    const prompt = message(templateCalls(llm)[0], 'user');
    expect(prompt)
      .to.include('Abstract of open-maps')
      .and.include(site.slides[1])
      .and.not.include('Navigation menu')
      .and.not.include('Footer imprint');
    expect(prompt.toLowerCase()).to.match(/park|children|bridge/);
    expect(templateCalls(llm)).to.have.length(1);
    // The filled template: the model's title, the request's context in the frontmatter, the page images linked.
    expect(out.markdown_content)
      .to.include('# Open maps for everyone')
      .and.include('Ada Lovelace')
      .and.include('open-maps-assets/slides-page-002.png');
    expect(out.topic).to.equal('Open data');
    expect(out.tags).to.deep.equal(['maps', 'volunteering']);
    expect(out.attachments).to.deep.equal(
      [1, 2].map(
        (n) => `jobs/${jobId}/out/sessions/FOSDEM_202026/en/Geo_20spatial/open-maps-assets/slides-page-00${n}.png`,
      ),
    );
    expect(r.body.data.attachments).to.deep.equal(out.attachments);
    // The slides PDF was linked twice (once with a fragment): downloaded once.
    expect(site.count('/files/slides.pdf')).to.equal(1);

    const md = await download(out.markdown_file);
    expect(md.status).to.equal(200);
    expect(md.bytes.toString('utf8')).to.equal(out.markdown_content);
    for (const a of out.attachments) {
      const png = await download(a);
      expect(png.type).to.equal('image/png');
      expect(png.bytes.subarray(1, 4).toString('latin1')).to.equal('PNG');
    }
    const zip = await download(out.archive_file);
    expect(zip.type).to.equal('application/zip');
    expect(zip.bytes.subarray(0, 2).toString('latin1')).to.equal('PK');
    expect(zip.bytes.includes(Buffer.from('open-maps.md'))).to.equal(true);
    expect(zip.bytes.includes(Buffer.from('open-maps-assets/slides-page-001.png'))).to.equal(true);
    const listing = await s.call('GET', `/api/event-job/files/${out.target_dir}`);
    expect(listing.body.data.files.map((f: { path: string }) => f.path)).to.include.members([
      out.markdown_file,
      ...out.attachments,
      out.archive_file,
    ]);

    // The session store and the cached entry.
    const [rec, ...more] = await listSessionRecords(s.worker.store, { event: 'FOSDEM 2026' });
    expect(more).to.have.length(0);
    expect(rec).to.include({
      event: 'FOSDEM 2026',
      track: 'Geo spatial',
      session: 'Session open-maps',
      language: 'en',
      filename: 'open-maps',
      topic: 'Open data',
      job_id: jobId,
    });
    // The store keeps its own copy of the Markdown, outside the job (which retention may sweep).
    expect(rec!.markdown_key).to.match(/^sessions\/.+\/open-maps\.md$/);
    expect(out.markdown_file.endsWith(rec!.markdown_key)).to.equal(true);
    expect(await readSessionMarkdown(s.worker.store, rec!)).to.equal(out.markdown_content);
    expect(rec!.metadata).to.include({ day: '2026-02-01', starttime: '10:00' });
    expect(rec!.source).to.deep.equal({
      url: `${site.base}/s/open-maps`,
      video_url: `${site.base}/talk.mp4`,
      attachments_url: `${site.base}/attachments`,
    });
    const cached = await s.call('GET', '/api/session/cached');
    documented('get', '/api/session/cached', cached);
    expect(cached.body.data.sessions.map((e: any) => [e.event, e.session, e.url])).to.deep.include([
      'FOSDEM 2026',
      'Session open-maps',
      `${site.base}/s/open-maps`,
    ]);
    // The job's results hold the same data; its archive route packs the files.
    const job = await s.waitJob(jobId!);
    expect(job.results.output).to.deep.equal(out);
    expect(job.results.assets).to.include(out.markdown_file);
  });

  it('process-async: the job answers at once, the webhook gets markdown_file and attachments; the same video is not transcribed again', async () => {
    const videoHits = site.count('/talk.mp4');
    const r = await s.call(
      'POST',
      '/api/session/process-async',
      body('tiles', {
        video_url: `${site.base}/talk.mp4`,
        webhook: { url: hook.url, token: 'tok-session', jobId: 'client-1' },
      }),
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    documented('post', '/api/session/process-async', r);
    expect(r.body.data).to.include({ status: 'pending' });
    const jobId = r.body.data.job_id;
    await hook.waitFor(
      (reqs) => reqs.some((q) => q.json?.phase === 'completed' && q.json?.process?.id === jobId),
      120_000,
    );
    const done = hook.requests.find((q) => q.json?.phase === 'completed' && q.json?.process?.id === jobId)!;
    expect(done.headers['x-callback-token']).to.equal('tok-session');
    expect(done.json.job).to.deep.equal({ id: 'client-1' });
    expect(done.json.data.markdown_file).to.equal(`jobs/${jobId}/out/sessions/FOSDEM_202026/en/Geo_20spatial/tiles.md`);
    expect(done.json.data.attachments).to.deep.equal([]);
    expect(done.json.data.output.video_transcript.toLowerCase()).to.match(/park|children|bridge/);
    // The transcript came from the cache of the first test: no download, no video job.
    expect(site.count('/talk.mp4')).to.equal(videoHits);
    const job = await s.waitJob(jobId);
    expect(job.logs.map((l: { message: string }) => l.message).join('\n')).to.include('from the transcript cache');
  });

  it('a legacy job runs the same pipeline and answers in the legacy shape', async () => {
    const r = await s.call('POST', '/api/event-job/jobs', body('legacy-one'));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await s.waitJob(r.body.data.job_id);
    const j = await s.call('GET', `/api/event-job/jobs/${r.body.data.job_id}`);
    documented('get', '/api/event-job/jobs/{job_id}', j);
    expect(j.body.data.status).to.equal('completed');
    expect(j.body.data.results.markdown_file).to.match(/\/sessions\/FOSDEM_202026\/en\/Geo_20spatial\/legacy-one\.md$/);
    expect(j.body.data.results.assets).to.deep.equal([j.body.data.results.markdown_file]);
  });

  it('a legacy batch of three where one fails; restart completes it; fail-all fails a running batch', async () => {
    site.breakPath('/s/broken');
    const b = await s.call('POST', '/api/event-job/batches', {
      batch_name: 'day one',
      jobs: [body('b-one'), body('broken'), body('b-three')],
    });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    const batchId = b.body.data.batch_id;
    const settled = async (want: (d: any) => boolean) => {
      for (let i = 0; i < 240; i++) {
        const g = await s.call('GET', `/api/event-job/batches/${batchId}`);
        if (want(g.body.data)) return g.body.data;
        await new Promise((res) => setTimeout(res, 500));
      }
      throw new Error('batch did not settle');
    };
    const first = await settled((d) => d.completed_count + d.failed_count === 3);
    expect(first).to.include({ completed_count: 2, failed_count: 1 });
    const failed = first.jobs.find((j: any) => j.status === 'failed').job_id;
    const why = await s.call('GET', `/api/jobs/${failed}`);
    expect(why.body.data.error.code).to.equal('UPSTREAM_ERROR');
    expect(why.body.data.error.message).to.include('HTTP 404');

    site.fix('/s/broken');
    const restart = await s.call('POST', `/api/event-job/${failed}/restart`);
    expect(restart.body.data).to.include({ status: 'pending', message: 'Job restarted' });
    expect((await s.waitJob(failed, 60_000)).status).to.equal('completed');
    expect(await settled((d) => d.completed_count === 3)).to.include({ failed_count: 0, status: 'completed' });

    // fail-all on real work: two sessions whose pages are held by the server.
    site.hold('/slow/*');
    const running = await s.call('POST', '/api/event-job/batches', {
      batch_name: 'held',
      jobs: [
        { ...body('h-one'), url: `${site.base}/slow/h-one` },
        { ...body('h-two'), url: `${site.base}/slow/h-two` },
      ],
    });
    const heldId = running.body.data.batch_id;
    for (let i = 0; i < 120 && site.count('/slow/h-one') + site.count('/slow/h-two') < 1; i++)
      await new Promise((res) => setTimeout(res, 250));
    const all = await s.call('POST', '/api/event-job/batches/fail-all', { batch_id: heldId, reason: 'stop the day' });
    expect(all.status, JSON.stringify(all.body)).to.equal(200);
    expect(all.body.data.failed_count).to.equal(2);
    site.release('/slow/*');
    const g = await s.call('GET', `/api/event-job/batches/${heldId}`);
    for (const j of g.body.data.jobs) {
      const d = await s.waitJob(j.job_id);
      expect(d.status).to.equal('failed');
      expect(d.error.message).to.equal('stop the day');
    }
  });

  it("chunking=true cuts the session's Markdown within the budget, each chunk naming its session and track", async () => {
    const r = await s.call('POST', '/api/session/process', body('chunked', { chunking: true, chunk_max_tokens: 48 }));
    expect(r.status, JSON.stringify(r.body).slice(0, 800)).to.equal(200);
    documented('post', '/api/session/process', r);
    const { chunks, chunking } = r.body.data;
    const md: string = r.body.data.output.markdown_content;
    expect(chunking).to.deep.equal({ tokenizer: 'cl100k_base', max_tokens: 48, overlap_tokens: 0 });
    expect(chunks.length).to.be.greaterThan(1);
    for (const c of chunks) {
      expect(c).to.include({ session: 'Session chunked', track: 'Geo spatial' });
      expect(c.tokens).to.be.at.most(48);
      expect(md.slice(c.char_start, c.char_end)).to.equal(c.text);
      // No recording: no chunk has times.
      expect(c).to.not.have.any.keys('start', 'end');
    }
    expect(chunks.map((c: any) => c.text).join(' ')).to.include(TEMPLATE_FIELDS.teaser);
    const bad = await s.call('POST', '/api/session/process', body('unchunked', { chunk_max_tokens: 48 }));
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body.error.details.issues)).to.contain('chunk_max_tokens');
  });

  it('grounding=true places each value in the session page or the transcript (with its seconds); an absent one is null and named', async () => {
    // The model answers words of the text it got: a phrase of the transcript, one of the page, one of neither.
    const phrases: { spoken?: string; later?: string } = {};
    llm.respond((req) => {
      if (!req.json?.response_format) return undefined;
      const transcript = /## Transcript of the recording\n\n([\s\S]*?)\n"""/.exec(message(req, 'user'))?.[1] ?? '';
      const words = transcript.trim().split(/\s+/);
      phrases.spoken = words.slice(1, 5).join(' ');
      phrases.later = words.slice(-4).join(' ');
      return {
        content: JSON.stringify({
          title: 'how volunteers map the city',
          teaser: 'Quantum chromodynamics on a shoestring budget',
          summary: phrases.spoken,
          key_points: ['volunteers map the city', phrases.later],
          discussion: '',
          links: [],
          topic: '',
          tags: [],
        }),
      };
    });
    const r = await s.call(
      'POST',
      '/api/session/process',
      body('grounded', { video_url: `${site.base}/talk.mp4`, grounding: true }),
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 800)).to.equal(200);
    documented('post', '/api/session/process', r);
    const { output, template_sources: src, unsupported_fields, template_fields } = r.body.data;
    expect(phrases.spoken, 'the prompt held the transcript').to.match(/\S+ \S+ \S+ \S+/);
    const own: Record<string, string> = { page: output.page_text, transcript: output.video_transcript };
    expect(output.page_text).to.include('Abstract of grounded');
    // Each source: its part, offsets into that part's text as the result gives it, the same words.
    expect(src.title).to.include({ part: 'page' });
    expect(src.summary).to.include({ part: 'transcript' });
    for (const name of ['title', 'summary']) {
      const at = src[name];
      expect(own[at.part].slice(at.start, at.end), name).to.equal(at.text);
      expect(at.text.toLowerCase(), name).to.equal(
        (name === 'title' ? template_fields.title : phrases.spoken)!.toLowerCase(),
      );
    }
    // The transcript's value with the seconds it was said in (the video's segments are kept); the page's with none.
    expect(src.summary.start_s).to.be.a('number').and.at.least(0);
    expect(src.summary.end_s).to.be.a('number').and.above(src.summary.start_s).and.below(30);
    expect(src.title).to.not.have.any.keys('start_s', 'end_s');
    // A list whose items stand in the page and in the transcript: the field names no part, each item its own.
    expect(src.key_points).to.not.have.property('part');
    expect(src.key_points.items.map((i: any) => i.part)).to.deep.equal(['page', 'transcript']);
    for (const i of src.key_points.items) expect(own[i.part].slice(i.start, i.end)).to.equal(i.text);
    expect(src.key_points.items[1].end_s).to.be.at.least(src.summary.end_s);
    // The value the text does not hold: null, emptied, named, and not in the Markdown.
    expect(src.teaser).to.equal(null);
    expect(template_fields.teaser).to.equal('');
    expect(unsupported_fields).to.deep.equal(['teaser']);
    expect(output.markdown_content).to.not.include('Quantum');
    expect(r.body.data.input).to.include({ grounding: true });
    // The job's results hold the same grounding.
    const jobId = /^jobs\/(job-[0-9a-f-]+)\//.exec(output.markdown_file)![1]!;
    expect((await s.waitJob(jobId)).results.template_sources).to.deep.equal(src);

    // Without grounding the result keeps its shape: no page text, no sources.
    const plain = await s.call('POST', '/api/session/process', body('ungrounded'));
    expect(plain.status).to.equal(200);
    expect(plain.body.data.output).to.not.have.property('page_text');
    expect(plain.body.data).to.not.have.any.keys('template_sources', 'unsupported_fields', 'template_fields');
  });

  it('a template that embeds the transcript gives the chunks of its words their times, and the others none', async () => {
    const r = await s.call(
      'POST',
      '/api/session/process',
      body('timed', {
        video_url: `${site.base}/talk.mp4`,
        template: 'VideoSummary',
        chunking: true,
        chunk_max_tokens: 16,
      }),
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 800)).to.equal(200);
    documented('post', '/api/session/process', r);
    const { chunks, output } = r.body.data;
    const words = (t: string) => (t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
    const transcript = words(output.video_transcript);
    expect(transcript).to.match(/park|children|bridge/);
    // `{{text}}`: the transcript stands in the Markdown as it is.
    expect(output.markdown_content).to.include(output.video_transcript.trim());
    const timed = chunks.filter((c: any) => 'start' in c);
    const untimed = chunks.filter((c: any) => !('start' in c));
    expect(timed.length, JSON.stringify(chunks.map((c: any) => c.text))).to.be.at.least(2);
    let last = -1;
    for (const c of timed) {
      expect(transcript, c.text).to.include(words(c.text));
      expect(c.start).to.be.at.least(Math.max(0, last));
      expect(c.end).to.be.above(c.start).and.below(30);
      last = c.start;
    }
    // The chunks of the page, the headings and the model's fields: no times.
    expect(untimed.map((c: any) => c.text).join('\n')).to.include('Abstract of timed');
    for (const c of untimed) {
      expect(c).to.not.have.property('end');
      expect(transcript.includes(words(c.text)) && words(c.text).split(' ').length >= 4, c.text).to.equal(false);
    }
  });

  it('grounding with a target_language other than the source_language is a 400 naming grounding, before anything is queued', async () => {
    const paths = (r: { body: any }) => r.body.error.details.issues.map((i: { path: string }) => i.path);
    const into = await s.call('POST', '/api/session/process', body('g-de', { grounding: true, target_language: 'de' }));
    expect(into.status, JSON.stringify(into.body)).to.equal(400);
    expect(paths(into)).to.deep.equal(['grounding']);
    expect(into.body.error.message).to.include('target_language must be the source_language (en)');
    // Absent, a session's target_language is de: the message says so.
    const { target_language: _, ...noTarget } = body('g-absent', { grounding: true });
    const absent = await s.call('POST', '/api/session/process-async', noTarget);
    expect(absent.status, JSON.stringify(absent.body)).to.equal(400);
    expect(paths(absent)).to.deep.equal(['grounding']);
    expect(absent.body.error.message).to.include("a session's target_language is de when absent");
    const viaJobs = await s.call('POST', '/api/jobs/', {
      job_type: 'session',
      parameters: body('g-job', { grounding: true, target_language: 'fr' }),
    });
    expect(viaJobs.status).to.equal(400);
    expect(paths(viaJobs)).to.deep.equal(['parameters.grounding']);
    // The legacy event jobs do not offer it.
    const legacy = await s.call('POST', '/api/event-job/jobs', body('g-legacy', { grounding: true }));
    expect(legacy.status).to.equal(400);
    expect(paths(legacy)).to.deep.equal(['grounding']);
    // Nothing reached the site or the model.
    for (const n of ['g-de', 'g-absent', 'g-job', 'g-legacy']) expect(site.count(`/s/${n}`), n).to.equal(0);
    expect(llm.chatRequests()).to.have.length(0);
  });

  it('every validation path answers before anything is queued', async () => {
    const expectError = (r: { status: number; body: any }, status: number, code: string) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(status);
      expect(r.body.error.code).to.equal(code);
      return r.body.error;
    };
    const paths = (e: any) => e.details.issues.map((i: { path: string }) => i.path);
    const none = expectError(
      await s.call('POST', '/api/session/process', { day: '2026-02-01' }),
      400,
      'VALIDATION_ERROR',
    );
    expect(paths(none)).to.include.members(['event', 'session', 'url', 'filename', 'track']);
    // The message itself names them (contract §8), not only details.issues.
    expect(none.message).to.equal('event, session, url, filename and track are required.');
    const some = expectError(
      await s.call('POST', '/api/session/process-async', { event: 'E', session: 'S', url: `${site.base}/s/x` }),
      400,
      'VALIDATION_ERROR',
    );
    expect(paths(some)).to.deep.equal(['filename', 'track']);
    expect(some.message).to.equal('filename and track are required.');
    for (const [field, value] of [
      ['url', '/s/relative'],
      ['url', 'ftp://example.org/x'],
      ['video_url', 'not a url'],
      ['attachments_url', 'file:///etc/passwd'],
      ['source_language', 'xx'],
      ['target_language', 'english'],
    ] as const) {
      const e = expectError(
        await s.call('POST', '/api/session/process', body('v', { [field]: value })),
        400,
        'VALIDATION_ERROR',
      );
      expect(paths(e), `${field}=${value}`).to.deep.equal([field]);
    }
    expectError(
      await s.call('POST', '/api/session/process', body('v', { template: 'NoSuchTemplate' })),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    expectError(
      await s.call('POST', '/api/session/process', body('v', { template: '../Session' })),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    const viaJobs = expectError(
      await s.call('POST', '/api/jobs/', { job_type: 'session', parameters: { event: 'E', url: 'x' } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(paths(viaJobs)).to.include.members([
      'parameters.session',
      'parameters.url',
      'parameters.filename',
      'parameters.track',
    ]);
    expect(viaJobs.message).to.match(
      /^parameters\.session, parameters\.filename and parameters\.track are required; parameters\.url: /,
    );
    expectError(
      await s.call('POST', '/api/jobs/', { job_type: 'session', parameters: body('v', { template: 'Nope' }) }),
      404,
      'TEMPLATE_NOT_FOUND',
    );
    const legacy = expectError(await s.call('POST', '/api/event-job/jobs', { event: 'E' }), 400, 'VALIDATION_ERROR');
    expect(paths(legacy)).to.include.members(['session', 'url', 'filename', 'track']);
    // A legacy batch job may leave out filename and track (contract §8), not session.
    const batch = expectError(
      await s.call('POST', '/api/event-job/batches', {
        batch_name: 'b',
        jobs: [body('ok'), { event: 'E', url: `${site.base}/s/x` }],
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(paths(batch)).to.deep.equal(['jobs.1.session']);
    expect(batch.message).to.equal('jobs.1.session is required.');
    expectError(await s.call('POST', '/api/event-job/batches', { batch_name: 'b', jobs: [] }), 400, 'VALIDATION_ERROR');
    // Nothing reached the site or the model.
    expect(site.count('/s/v') + site.count('/s/x')).to.equal(0);
    expect(llm.chatRequests()).to.have.length(0);
  });

  it('a path-traversal attempt in every name field stays inside the job output; a name of separators only is a 400', async () => {
    const r = await s.call('POST', '/api/session/process', {
      ...body('trav'),
      event: '../../../etc',
      track: '..\\..\\windows',
      session: '../../session',
      filename: '../../../../passwd.md',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const out = r.body.data.output;
    const jobId = /^jobs\/(job-[0-9a-f-]+)\/out\/sessions\//.exec(out.markdown_file)?.[1];
    expect(jobId, out.markdown_file).to.be.a('string');
    const segments = out.markdown_file.split('/');
    expect(segments.every((seg: string) => seg !== '..' && seg !== '.' && seg !== '' && !seg.includes('\\'))).to.equal(
      true,
    );
    expect(segments).to.have.length(8);
    expect((await download(out.markdown_file)).status).to.equal(200);
    const [rec] = await listSessionRecords(s.worker.store, { event: '../../../etc' });
    expect(rec?.filename).to.equal('-.-.-.-passwd');
    for (const field of ['event', 'track', 'filename', 'session']) {
      const e = await s.call('POST', '/api/session/process', body('x', { [field]: '..' }));
      expect(e.status, `${field}: ${JSON.stringify(e.body)}`).to.equal(400);
      expect(e.body.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal([field]);
    }
  });
});
