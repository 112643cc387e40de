import { expect } from 'chai';
import { processBody } from '../../api/schemas/pdf.schemas';
import { validateJob, validateParameters } from '../../api/services/job-intake';
import { AppError } from '../../core/errors';
import { EXTRACTION_METHODS, JOB_DEFAULTS, withDefaults } from '../../core/jobs/job-defaults';
import { jobParamsByType, PUBLIC_JOB_TYPES, type JobParams, type JobType } from '../../core/jobs/job-params';
import { PDF_PAGE_GROUP, PDF_PAGE_GROUP_FINE } from '../../core/jobs/fanout';
import type { JobInput, JobRun } from '../../workflows/definitions';
import type { PipelineTable } from '../../workflows/pipelines';

// The job contract (core/jobs/job-params.ts): one schema per job type, parsed once at the API edge; the types it infers
// travel through JobInput and the pipeline table into the activities.

/** The least each job type takes, as its route or /api/jobs/ would send it. */
const MINIMAL: { [T in JobType]: unknown } = {
  pdf: { filename: '/data/in/a.pdf' },
  document: { file_key: 'uploads/a/b.docx' },
  session: { event: 'E', session: 'S', url: 'https://example.org/s', filename: 's', track: 'T' },
  transformer: { operation: 'html-to-markdown', html: '<p>x</p>' },
  audio: { file_key: 'uploads/a/b.wav' },
  video: { url: 'https://example.org/v.mp4' },
  imageocr: { url: 'https://example.org/i.png' },
  external_ocr: { file_key: 'uploads/a/b.pdf', file_size: 10 },
  video_frames: { file_key: 'uploads/a/b.mp4', timestamps: [0.5], interval: null },
  track_summary: { track: 'Maps', mode: 'summary', chunk_chars: 4000 },
  event_summary: { event: 'Conf', chunk_chars: 4000 },
  story: { topic: 'Maps', target_group: 'Pupils', chunk_chars: 4000 },
};

const RUN: JobRun = {
  jobId: 'job-00000000-0000-4000-8000-000000000001',
  createdAt: '2026-01-01T00:00:00.000Z',
  run: 1,
};

/** The message a refused extraction method has had since before the contract was one module. */
const BAD_METHOD = 'Invalid option: expected one of "native"|"local_ocr"|"vision_llm"|"combined"';

function refusal(f: () => unknown): AppError {
  try {
    f();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('the job contract', () => {
  describe('types (checked by the compiler)', () => {
    it('makes the pipeline table name every job type, and a JobInput pair its type with that type’s parameters', () => {
      // @ts-expect-error a table without every job type's pipeline does not compile
      const partial: PipelineTable = { pdf: { pipeline: async () => ({}), patch: 'pdf-pipeline' } };
      // @ts-expect-error a session job's input needs a session's parameters (event, session, url, ...)
      const mismatched: JobInput = { ...RUN, jobType: 'session', parameters: { filename: '/data/a.pdf' } };
      const method = (i: JobInput) => (i.jobType === 'pdf' ? i.parameters.extraction_method : undefined);
      expect(
        method({ ...RUN, jobType: 'pdf', parameters: { filename: '/a.pdf', extraction_method: 'combined' } }),
      ).to.equal('combined');
      expect([partial, mismatched]).to.have.length(2);
    });
  });

  it('has a schema for every job type, and each parses what its routes send', () => {
    expect(Object.keys(jobParamsByType).sort()).to.deep.equal(Object.keys(MINIMAL).sort());
    for (const type of Object.keys(MINIMAL) as JobType[]) {
      const r = jobParamsByType[type].safeParse(MINIMAL[type]);
      expect(r.success, `${type}: ${r.success ? '' : JSON.stringify(r.error.issues)}`).to.equal(true);
    }
    expect(PUBLIC_JOB_TYPES.every((t) => t in jobParamsByType)).to.equal(true);
  });

  it('pairs a job type with its validated parameters (validateJob)', () => {
    const job = validateJob('audio', { filename: '/data/in/talk.wav' });
    expect(job).to.deep.equal({
      jobType: 'audio',
      parameters: { filename: '/data/in/talk.wav', source_language: 'de', target_language: 'de' },
    });
  });

  describe('defaults', () => {
    it('records the transcription languages once, at creation, from their one definition', () => {
      const p: JobParams<'audio'> = validateParameters('audio', { file_key: 'uploads/a/b.wav' });
      expect(p).to.include(JOB_DEFAULTS.transcription).and.to.include({ source_language: 'de', target_language: 'de' });
      // Applying them again changes nothing: parsing the recorded parameters, or the readers' withDefaults.
      expect(validateParameters('audio', p)).to.deep.equal(p);
      expect(withDefaults('transcription', p)).to.deep.equal(p);
    });

    it('gives the readers of inputs recorded without them the same values the schema records', () => {
      const recorded = validateParameters('session', MINIMAL.session);
      const old = MINIMAL.session as Record<string, unknown>;
      expect(withDefaults('session', old)).to.deep.equal(recorded);
      expect(withDefaults('transcription', { filename: '/a.wav' })).to.deep.equal({
        filename: '/a.wav',
        source_language: 'de',
        target_language: 'de',
      });
      // What the readers assumed before: an empty value or one of another kind means the default.
      expect(withDefaults('transcription', { source_language: '', target_language: 7 })).to.deep.equal({
        source_language: 'de',
        target_language: 'de',
      });
    });

    it('keeps values given, and leaves the assumed defaults out of a job’s recorded parameters', () => {
      expect(withDefaults('transcription', { source_language: 'auto', target_language: 'en' })).to.deep.equal({
        source_language: 'auto',
        target_language: 'en',
      });
      expect(validateParameters('pdf', { filename: '/a.pdf' })).to.not.have.property('extraction_method');
      expect(withDefaults('pdf', { filename: '/a.pdf' }).extraction_method).to.equal('native');
      const text = validateParameters('transformer', { operation: 'text', text: 'Hallo' });
      expect(text).to.not.have.any.keys('source_language', 'target_language');
      expect(withDefaults('transformer', text)).to.include({ source_language: 'de', target_language: 'de' });
    });
  });

  describe('extraction methods', () => {
    it('refuses a method it does not know with the message it always gave, at /api/jobs/ and /api/pdf/process', () => {
      const e = refusal(() => validateParameters('pdf', { filename: '/a.pdf', extraction_method: 'magic' }));
      expect(e.code).to.equal('VALIDATION_ERROR');
      expect(e.message).to.equal(`parameters.extraction_method: ${BAD_METHOD}.`);
      expect(e.details).to.deep.equal({ issues: [{ path: 'parameters.extraction_method', message: BAD_METHOD }] });
      const form = processBody.safeParse({ url: 'https://example.org/a.pdf', extraction_method: 'magic' });
      expect(form.success).to.equal(false);
      expect(form.error?.issues.map((i) => [i.path.join('.'), i.message])).to.deep.equal([
        ['extraction_method', BAD_METHOD],
      ]);
    });

    it('accepts each method everywhere a method is read, and the form defaults to native', () => {
      for (const m of EXTRACTION_METHODS) {
        expect(validateParameters('pdf', { filename: '/a.pdf', extraction_method: m }).extraction_method).to.equal(m);
        expect(PDF_PAGE_GROUP[m]).to.be.a('number');
        expect(PDF_PAGE_GROUP_FINE[m]).to.be.a('number');
      }
      expect(processBody.parse({ url: 'https://example.org/a.pdf' }).extraction_method).to.equal('native');
    });
  });
});
