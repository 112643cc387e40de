import { expect } from 'chai';
import { audioProcessBody } from '../../api/schemas/audio.schemas';
import { documentProcessBody } from '../../api/schemas/document.schemas';
import { jobBodyParameters } from '../../api/schemas/job-body';
import { processBody } from '../../api/schemas/pdf.schemas';
import { videoHostedBody } from '../../api/schemas/video.schemas';
import { validateBodyParameters } from '../../api/services/job-intake';
import { refusal } from '../support/assert';

// Route bodies to job parameters (api/schemas/job-body.ts): one transform from the job type's schema, and the rest of
// the job's validation after the route's (api/services/job-intake.ts `validateBodyParameters`).

const upload = { file_key: 'uploads/job-1/a.pdf', original_name: 'a.pdf' };

describe('route bodies to job parameters', () => {
  it('gives a PDF form’s fields to the pdf job: useCache as use_cache, empty fields left out, the defaults kept', () => {
    const body = processBody.parse({
      url: 'https://example.org/a.pdf',
      template: '',
      ocr_language: '',
      output_format: 'markdown',
      useCache: 'false',
      page_start: '2',
    });
    expect(jobBodyParameters('pdf', body)).to.deep.equal({
      url: 'https://example.org/a.pdf',
      extraction_method: 'native',
      output_format: 'markdown',
      context: {},
      use_cache: false,
      includeImages: false,
      page_start: 2,
    });
  });

  it('leaves out the speech options holding the defaults a job does not record, and keeps those that differ', () => {
    const plain = audioProcessBody.parse({ url: 'https://example.org/a.mp3', vad: 'true', diarize: 'false' });
    expect(jobBodyParameters('audio', plain)).to.deep.equal({ url: 'https://example.org/a.mp3', use_cache: true });
    const asked = audioProcessBody.parse({
      url: 'https://example.org/a.mp3',
      vad: 'false',
      diarize: 'true',
      max_speakers: '2',
      word_timestamps: 'true',
      prompt: '  Ada Lovelace ',
    });
    expect(jobBodyParameters('audio', asked)).to.deep.equal({
      url: 'https://example.org/a.mp3',
      use_cache: true,
      vad: false,
      diarize: true,
      max_speakers: 2,
      word_timestamps: true,
      prompt: 'Ada Lovelace',
    });
    expect(
      jobBodyParameters('audio', audioProcessBody.parse({ url: 'https://x.org/a', prompt: '  ' })),
    ).to.not.have.property('prompt');
  });

  it('takes only the fields the job type declares: the upload and the route’s own fields stay the route’s', () => {
    const body = { file: { filepath: '/tmp/x' }, useCache: true, hosted: true, language: 'de', template: 'T' };
    expect(jobBodyParameters('pdf', body)).to.deep.equal({ use_cache: true, template: 'T' });
    const hosted = videoHostedBody.parse({ url: 'https://example.org/watch?v=1' });
    expect(jobBodyParameters('video', hosted)).to.deep.equal({ url: 'https://example.org/watch?v=1' });
  });

  it('validates what the route adds, the job’s rules across fields and its defaults, under parameters.…', () => {
    const audio = jobBodyParameters('audio', audioProcessBody.parse({ url: 'https://example.org/a.mp3' }));
    expect(validateBodyParameters('audio', audio)).to.deep.equal({
      url: 'https://example.org/a.mp3',
      use_cache: true,
      source_language: 'de',
      target_language: 'de',
    });
    const speakers = refusal(() =>
      validateBodyParameters(
        'audio',
        jobBodyParameters('audio', audioProcessBody.parse({ url: 'https://x.org/a', max_speakers: '2' })),
      ),
    );
    expect(speakers.details).to.deep.equal({
      issues: [{ path: 'parameters.max_speakers', message: 'max_speakers needs diarize=true' }],
    });
    const orphan = jobBodyParameters('document', documentProcessBody.parse({ render_method: 'local_ocr' }));
    expect(refusal(() => validateBodyParameters('document', orphan, upload)).details).to.deep.equal({
      issues: [{ path: 'parameters.render_method', message: 'render_method needs extraction_method=render' }],
    });
    const name = refusal(() => validateBodyParameters('pdf', {}, { ...upload, original_name: 'x'.repeat(501) }));
    expect(name.message).to.match(/^parameters\.original_name: /);
    const both = refusal(() => validateBodyParameters('pdf', { url: 'https://example.org/a.pdf' }, upload));
    expect(both.details).to.deep.equal({
      issues: [{ path: 'parameters.url', message: 'give exactly one of filename, an uploaded file and url' }],
    });
  });

  it('takes only the job’s own fields on trust: any other is still stripped, or refused by a strict job type', () => {
    const extra = { template: 'T', colour: 'red' } as Record<string, unknown>;
    expect(validateBodyParameters('pdf', extra, upload)).to.deep.equal({ ...upload, template: 'T' });
    expect(refusal(() => validateBodyParameters('document', extra, upload)).message).to.include('colour');
  });
});
