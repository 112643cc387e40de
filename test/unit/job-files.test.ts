import { expect } from 'chai';
import { resolveJobFilePath } from '../../api/services/job-files';
import { AppError } from '../../core/errors';

const JOB = 'job-6f1c2d9e-3b4a-4c5d-8e9f-0a1b2c3d4e5f';

function refusal(raw: string): string {
  try {
    resolveJobFilePath(raw);
  } catch (e) {
    expect(e, raw).to.be.instanceOf(AppError);
    return (e as AppError).code;
  }
  throw new Error(`${raw} was accepted`);
}

describe('resolveJobFilePath (GET /api/event-job/files/{path})', () => {
  it('maps a handed-out asset path, verbatim or percent-encoded, to the job and the file in its output folder', () => {
    for (const raw of [
      `jobs/${JOB}/out/result.md`,
      `jobs/${JOB}/out/result%2Emd`,
      encodeURIComponent(`jobs/${JOB}/out/result.md`),
    ]) {
      expect(resolveJobFilePath(raw), raw).to.deep.equal({ jobId: JOB, rel: 'result.md' });
    }
    expect(resolveJobFilePath(`jobs/${JOB}/out/embedded/img-000.png`)).to.deep.equal({
      jobId: JOB,
      rel: 'embedded/img-000.png',
    });
  });

  it('maps target_dir and the legacy job-id forms to the output folder itself', () => {
    expect(resolveJobFilePath(`jobs/${JOB}/out`)).to.deep.equal({ jobId: JOB, rel: '' });
    expect(resolveJobFilePath(`jobs/${JOB}/out/`)).to.deep.equal({ jobId: JOB, rel: '' });
    expect(resolveJobFilePath(JOB)).to.deep.equal({ jobId: JOB, rel: '' });
    expect(resolveJobFilePath(`${JOB}/result.md`)).to.deep.equal({ jobId: JOB, rel: 'result.md' });
  });

  it('refuses with FORBIDDEN whatever would leave a job output folder, however it is encoded', () => {
    const attempts = [
      '..%2F..%2Fetc%2Fpasswd',
      '../../etc/passwd',
      `jobs/${JOB}/out/../internal/results.json`,
      `jobs/${JOB}/out/%2e%2e/internal/results.json`,
      `jobs/${JOB}/out/%2E%2E%2Finternal%2Fresults.json`,
      `jobs/${JOB}/out/.%2Fresult.md`,
      `jobs/${JOB}/out//result.md`,
      `jobs/${JOB}/out//`,
      '/',
      `/jobs/${JOB}/out/result.md`,
      '%2Fetc%2Fpasswd',
      `jobs%5C${JOB}%5Cout%5Cresult.md`,
      `jobs/${JOB}/out/..%5C..%5Crecords`,
      `jobs/${JOB}/out/%00result.md`,
      `jobs/${JOB}/out/result.md%0A`,
      `jobs/${JOB}/internal/results.json`,
      `jobs/${JOB}`,
      `records/jobs/${JOB}.json`,
      'uploads/2024-01-01/x.pdf',
      'etc/passwd',
      `job-not-a-uuid/result.md`,
    ];
    for (const raw of attempts) expect(refusal(raw), raw).to.equal('FORBIDDEN');
  });

  it('answers FILE_NOT_FOUND for names no stored file can have, and VALIDATION_ERROR for bad encoding or no path', () => {
    expect(refusal(`jobs/${JOB}/out/r%C3%A9sultat.md`)).to.equal('FILE_NOT_FOUND');
    expect(refusal(`jobs/${JOB}/out/a b.md`)).to.equal('FILE_NOT_FOUND');
    expect(refusal(`jobs/${JOB}/out/${'a'.repeat(450)}`)).to.equal('FILE_NOT_FOUND');
    expect(refusal(`jobs/${JOB}/out/%E0%A4%A`)).to.equal('VALIDATION_ERROR');
    expect(refusal('')).to.equal('VALIDATION_ERROR');
  });
});
