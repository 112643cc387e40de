import { expect } from 'chai';
import { WorkflowNotFoundError } from '@temporalio/common';
import { z } from 'zod';
import { toApiError } from '../../api/errors';
import { AppError } from '../../core/errors';

describe('toApiError', () => {
  describe('an AppError', () => {
    it('keeps its status, code, message and details', () => {
      const r = toApiError(new AppError('TEMPLATE_NOT_FOUND', 'No template named x.', { name: 'x' }));
      expect(r.status).to.equal(404);
      expect(r.body).to.deep.equal({
        code: 'TEMPLATE_NOT_FOUND',
        message: 'No template named x.',
        details: { name: 'x' },
      });
      expect(r.unexpected).to.equal(false);
    });

    it('defaults details to an empty object', () => {
      expect(toApiError(new AppError('UNAUTHORIZED', 'no')).body.details).to.deep.equal({});
    });

    it('is unexpected when its status is 5xx', () => {
      const r = toApiError(new AppError('UPSTREAM_ERROR', 'The provider failed.'));
      expect(r.status).to.equal(502);
      expect(r.body.code).to.equal('UPSTREAM_ERROR');
      expect(r.unexpected).to.equal(true);
    });

    it('maps each code to the status of contract §1', () => {
      const cases: [ConstructorParameters<typeof AppError>[0], number][] = [
        ['VALIDATION_ERROR', 400],
        ['FORBIDDEN', 403],
        ['INVALID_STATE', 409],
        ['PAYLOAD_TOO_LARGE', 413],
        ['UNSUPPORTED_MEDIA_TYPE', 415],
        ['UNPROCESSABLE_INPUT', 422],
        ['RATE_LIMITED', 429],
        ['PROVIDER_NOT_CONFIGURED', 503],
        ['TIMEOUT', 504],
      ];
      for (const [code, status] of cases) expect(toApiError(new AppError(code, 'm')).status, code).to.equal(status);
    });
  });

  describe('a ZodError', () => {
    const schema = z.object({ a: z.object({ b: z.number() }), c: z.string(), items: z.array(z.string()) });

    it('becomes a 400 VALIDATION_ERROR listing every issue as {path, message}', () => {
      const res = schema.safeParse({ a: { b: 'x' }, items: ['ok', 3] });
      expect(res.success).to.equal(false);
      const r = toApiError(res.error);
      expect(r.status).to.equal(400);
      expect(r.unexpected).to.equal(false);
      expect(r.body.code).to.equal('VALIDATION_ERROR');
      const issues = r.body.details.issues as { path: string; message: string }[];
      expect(issues.map((i) => i.path)).to.have.members(['a.b', 'c', 'items.1']);
      for (const i of issues) {
        expect(Object.keys(i)).to.have.members(['path', 'message']);
        expect(i.message).to.be.a('string').and.not.equal('');
      }
    });

    it('names what is wrong in the message itself: the missing fields, then each other problem with its field', () => {
      // A field name keeps its case at the start of the sentence.
      const format = toApiError(
        z.object({ output_format: z.enum(['text', 'markdown']) }).safeParse({ output_format: 'html' }).error,
      );
      expect(format.body.message).to.match(/^output_format: /);
      expect(toApiError(z.string().safeParse(5).error).body.message).to.match(/^[A-Z]/);
      const session = z.object({
        event: z.string(),
        session: z.string(),
        url: z.string(),
        filename: z.string(),
        track: z.string(),
        page: z.number().min(1).optional(),
      });
      const none = toApiError(session.safeParse({}).error);
      expect(none.body.message).to.equal('event, session, url, filename and track are required.');
      const one = toApiError(session.safeParse({ event: 'E', session: 'S', url: 'u', filename: 'f', page: 0 }).error);
      expect(one.body.message).to.match(/^track is required; page: .*>=\s*1/);
      const many = toApiError(
        z.object({ a: z.array(z.number()) }).safeParse({ a: ['x', 'y', 'z', 'v', 'w', 'q', 'r', 's'] }).error,
      );
      expect(many.body.message).to.match(/^a\.0: .*; a\.5: .*; and 2 more problem\(s\) in details\.issues\.$/);
    });

    it('gives an empty path for an issue at the root', () => {
      const res = z.string().safeParse(5);
      const issues = toApiError(res.error).body.details.issues as { path: string }[];
      expect(issues).to.have.length(1);
      expect(issues[0].path).to.equal('');
    });
  });

  describe('a body parser error', () => {
    it('maps a 413 entity.too.large to PAYLOAD_TOO_LARGE with the limit in details', () => {
      const err = Object.assign(new Error('request entity too large'), {
        status: 413,
        type: 'entity.too.large',
        limit: 1048576,
      });
      const r = toApiError(err);
      expect(r.status).to.equal(413);
      expect(r.body.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(r.body.details).to.deep.equal({ limit_bytes: 1048576 });
      expect(r.unexpected).to.equal(false);
    });

    it('maps the plain object shape {status:413, type, limit} the same way', () => {
      const r = toApiError({ status: 413, type: 'entity.too.large', limit: 2048 });
      expect(r.status).to.equal(413);
      expect(r.body.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(r.body.details.limit_bytes).to.equal(2048);
    });

    it('maps a bare statusCode 413 without a limit to PAYLOAD_TOO_LARGE with no limit in details', () => {
      const r = toApiError({ statusCode: 413 });
      expect(r.status).to.equal(413);
      expect(r.body.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(r.body.details).to.deep.equal({});
    });

    it('maps entity.parse.failed to a 400 VALIDATION_ERROR about malformed JSON', () => {
      const err = Object.assign(new Error('Unexpected token } in JSON at position 9'), {
        status: 400,
        type: 'entity.parse.failed',
      });
      const r = toApiError(err);
      expect(r.status).to.equal(400);
      expect(r.body.code).to.equal('VALIDATION_ERROR');
      expect(r.body.details.issues).to.be.an('array').with.length(1);
      expect(r.body.message).to.not.contain('Unexpected token');
      expect(r.unexpected).to.equal(false);
    });

    it('maps the co-body shape (a SyntaxError with status 400) to VALIDATION_ERROR', () => {
      let err: unknown;
      try {
        JSON.parse('{"a":');
      } catch (e) {
        err = Object.assign(e as Error, { status: 400 });
      }
      const r = toApiError(err);
      expect(r.status).to.equal(400);
      expect(r.body.code).to.equal('VALIDATION_ERROR');
      expect(r.body.details.issues).to.be.an('array').that.is.not.empty;
    });

    it('maps a 415 and unsupported encodings to UNSUPPORTED_MEDIA_TYPE', () => {
      for (const err of [
        { status: 415 },
        { status: 415, type: 'encoding.unsupported' },
        { type: 'charset.unsupported' },
      ]) {
        const r = toApiError(err);
        expect(r.status, JSON.stringify(err)).to.equal(415);
        expect(r.body.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      }
    });
  });

  describe('router errors', () => {
    it('maps a 405 to METHOD_NOT_ALLOWED', () => {
      const r = toApiError(
        Object.assign(new Error('Method Not Allowed'), { status: 405, headers: { Allow: 'GET, HEAD' } }),
      );
      expect(r.status).to.equal(405);
      expect(r.body.code).to.equal('METHOD_NOT_ALLOWED');
      expect(r.unexpected).to.equal(false);
    });

    it('maps a 404 to NOT_FOUND', () => {
      const r = toApiError(Object.assign(new Error('not found'), { status: 404 }));
      expect(r.status).to.equal(404);
      expect(r.body.code).to.equal('NOT_FOUND');
    });
  });

  describe('a WorkflowNotFoundError', () => {
    it('becomes a 404 JOB_NOT_FOUND', () => {
      const r = toApiError(new WorkflowNotFoundError('workflow not found for ID: job-1', 'job-1', undefined));
      expect(r.status).to.equal(404);
      expect(r.body.code).to.equal('JOB_NOT_FOUND');
      expect(r.unexpected).to.equal(false);
    });

    it('is recognised by its name alone (it may cross package copies)', () => {
      const err = Object.assign(new Error('gone'), { name: 'WorkflowNotFoundError' });
      expect(toApiError(err).body.code).to.equal('JOB_NOT_FOUND');
    });
  });

  describe('other client errors from libraries', () => {
    it('hide the message unless it is marked as exposable', () => {
      const hidden = toApiError(
        Object.assign(new Error('secret internals /etc/passwd'), { status: 400, expose: false }),
      );
      expect(hidden.status).to.equal(400);
      expect(hidden.body.code).to.equal('VALIDATION_ERROR');
      expect(hidden.body.message).to.not.contain('secret');
      const shown = toApiError(Object.assign(new Error('Request aborted'), { status: 400, expose: true }));
      expect(shown.body.message).to.equal('Request aborted');
    });
  });

  describe('an unknown error', () => {
    it('becomes a 500 INTERNAL_ERROR that does not carry the original message or stack', () => {
      const err = new Error('db password is hunter2 at /srv/app/secret.ts:12');
      const r = toApiError(err);
      expect(r.status).to.equal(500);
      expect(r.body.code).to.equal('INTERNAL_ERROR');
      expect(r.unexpected).to.equal(true);
      const text = JSON.stringify(r.body);
      expect(text).to.not.contain('hunter2');
      expect(text).to.not.contain('secret.ts');
      expect(text).to.not.contain(err.stack!.split('\n')[1].trim());
    });

    it('handles thrown non-errors (undefined, null, a string, a number)', () => {
      for (const v of [undefined, null, 'boom: token=abc', 42]) {
        const r = toApiError(v);
        expect(r.status, String(v)).to.equal(500);
        expect(r.body.code).to.equal('INTERNAL_ERROR');
        expect(JSON.stringify(r.body)).to.not.contain('token=abc');
      }
    });

    it('does not leak a system error such as ECONNREFUSED', () => {
      const r = toApiError(Object.assign(new Error('ECONNREFUSED 10.0.0.1'), { code: 'ECONNREFUSED' }));
      expect(r.status).to.equal(500);
      expect(r.body.code).to.equal('INTERNAL_ERROR');
      expect(r.body.message).to.not.contain('ECONNREFUSED');
    });
  });

  it('maps an unreachable Temporal (ServiceError) to 503 UNAVAILABLE', () => {
    const err = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { name: 'ServiceError' });
    const m = toApiError(err);
    expect(m.status).to.equal(503);
    expect(m.body.code).to.equal('UNAVAILABLE');
    expect(m.body.message).to.not.include('connection refused');
  });
});
