import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, UsageError } from './args.mjs';
import { ApiError, createClient, multipart } from './client.mjs';
import { followJob, progressPrinter } from './follow.mjs';
import { exitCodeOf, printError, printResult } from './output.mjs';

const USAGE = `docproc: a client of the docproc service (DOCPROC_URL, default http://127.0.0.1:8080; key from DOCPROC_API_KEY or SERVICE_API_KEY)

  docproc pdf FILE [--method native|local_ocr|vision_llm|combined] [--field k=v]...
  docproc document FILE | --url URL [--method native|render] [--markdown] [--field k=v]...
  docproc imageocr FILE | --url URL [--field k=v]...
  docproc audio FILE [--subtitles OUT.srt|OUT.vtt] [--field k=v]...
  docproc video FILE | --url URL [--subtitles OUT.srt|OUT.vtt] [--field k=v]...
  docproc transformer OPERATION [--html H | --text T | --file F | --url U] [--field k=v]...
  docproc job TYPE [--file F] [--url U] [--field k=v]... [--no-follow]
  docproc follow JOB_ID     docproc get JOB_ID     docproc download JOB_ID|FILE_PATH [-o OUT|-]
  docproc call METHOD PATH [--field k=v]... [--file F | --file name=F]... [--body JSON]

  --field k=v sends a string, --field k:=JSON any JSON value. --json prints only the JSON answer on stdout.
  Synchronous calls that outlive the server's wait (504 with a job id) are followed to the end; files over 8 MB
  (or any with --async) are sent with Prefer: respond-async and their job followed.
  Exit codes: 0 ok, 1 job failed or other error, 2 usage, 3 UNAUTHORIZED/FORBIDDEN, 4 not found,
  5 invalid request (400, 409, 413, 415, 422), 6 server or provider unavailable (429, 5xx), 7 server unreachable.
  Errors print the envelope's code: "docproc: UNAUTHORIZED (401): ...".`;

/** Uploads larger than this ask for an asynchronous answer and follow their job. */
const ASYNC_UPLOAD_BYTES = 8 * 1024 * 1024;

/** Runs one command; sets the exit code (never throws). */
export async function main(argv) {
  let args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    return fail(err, false);
  }
  const json = args.flags.has('json');
  try {
    if (args.flags.has('help') || args.positionals.length === 0) {
      const asked = args.flags.has('help');
      (asked ? process.stdout : process.stderr).write(`${USAGE}\n`);
      process.exitCode = asked ? 0 : 2;
      return;
    }
    await run(args, createClient(), json);
  } catch (err) {
    fail(err, json);
  }
}

function fail(err, json) {
  printError(err, json);
  process.exitCode = exitCodeOf(err);
}

async function run(args, client, json) {
  const [command, ...rest] = args.positionals;
  const fields = args.fields;
  const progress = json || args.flags.has('quiet') ? { update() {}, done() {} } : progressPrinter();
  /** A synchronous call; a job handed over (202, or 504 past the server's wait) is followed to the end. */
  /** Answers `{ body }` (the server's answer) or `{ jobId }` (a job followed to its end). */
  const sync = async (method, urlPath, opts) => {
    try {
      const r = await client.call(method, urlPath, opts);
      const handedOver = r.status === 202 ? r.body?.data?.job_id : undefined;
      if (handedOver) {
        if (!json) process.stderr.write(`running as ${handedOver}; following it\n`);
        await finishJob(client, handedOver, progress, json);
        return { jobId: handedOver };
      }
      printResult(r.body, json);
      return { body: r.body };
    } catch (err) {
      const jobId = err instanceof ApiError && err.code === 'TIMEOUT' ? err.details?.job_id : undefined;
      if (!jobId) throw err;
      if (!json) process.stderr.write(`still running as ${jobId}; following it\n`);
      await finishJob(client, jobId, progress, json);
      return { jobId };
    }
  };
  // --subtitles OUT.srt|OUT.vtt: asks for subtitles in the file's format and writes them there (from the answer, or
  // the job's file when the job was followed).
  const subtitlesOut = args.opts.subtitles;
  const subtitleFormat = subtitlesOut ? /\.(srt|vtt)$/i.exec(subtitlesOut)?.[1].toLowerCase() : undefined;
  if (subtitlesOut && !subtitleFormat) throw new UsageError('--subtitles needs a file ending in .srt or .vtt');
  if (subtitlesOut && command !== 'audio' && command !== 'video')
    throw new UsageError('--subtitles is an option of audio and video');
  const subtitleField = subtitleFormat ? [['subtitles', subtitleFormat]] : [];
  const writeSubtitles = async (answer) => {
    if (!subtitlesOut) return;
    if (answer.body) await fs.promises.writeFile(subtitlesOut, answer.body.data?.subtitles ?? '');
    else
      await client.download(`/api/event-job/files/jobs/${answer.jobId}/out/subtitles.${subtitleFormat}`, subtitlesOut);
    if (!json) process.stderr.write(`subtitles written to ${subtitlesOut}\n`);
  };
  // A big upload (or --async) asks for the job at once (Prefer: respond-async) and follows it: no proxy's time limit
  // can cut a long wait, and the job id is known from the first answer.
  const withFile = async (urlPath, file, extra = []) => {
    const big = args.flags.has('async') || (fs.existsSync(file) && fs.statSync(file).size > ASYNC_UPLOAD_BYTES);
    return sync('POST', urlPath, {
      form: await multipart([...extra, ...fields], [['file', file]]),
      ...(big ? { prefer: 'respond-async' } : {}),
    });
  };

  switch (command) {
    case 'pdf':
      return withFile(
        '/api/pdf/process',
        one(rest, 'FILE'),
        args.opts.method ? [['extraction_method', args.opts.method]] : [],
      );
    case 'document': {
      // Word, PowerPoint, Excel, OpenDocument, RTF, EPUB, e-mail, HTML (a PDF or an image is read as its endpoint does).
      const extra = [
        ...(args.opts.method ? [['extraction_method', args.opts.method]] : []),
        ...(args.flags.has('markdown') ? [['output_format', 'markdown']] : []),
      ];
      if (args.opts.url)
        return sync('POST', '/api/document/process', {
          form: await multipart([...extra, ...fields, ['url', args.opts.url]], []),
        });
      return withFile('/api/document/process', one(rest, 'FILE'), extra);
    }
    case 'audio':
      return writeSubtitles(await withFile('/api/audio/process', one(rest, 'FILE'), subtitleField));
    case 'imageocr':
      if (args.opts.url)
        return sync('POST', '/api/imageocr/process-url', {
          json: { ...Object.fromEntries(fields), url: args.opts.url },
        });
      return withFile('/api/imageocr/process', one(rest, 'FILE'));
    case 'video':
      if (args.opts.url)
        return writeSubtitles(
          await sync('POST', '/api/video/process', {
            json: { ...Object.fromEntries([...subtitleField, ...fields]), url: args.opts.url },
          }),
        );
      return writeSubtitles(await withFile('/api/video/process', one(rest, 'FILE'), subtitleField));
    case 'transformer': {
      const op = one(rest, 'OPERATION');
      const body = { ...Object.fromEntries(fields) };
      const key = op === 'html-to-markdown' || op === 'extract-tables' ? 'html' : 'text';
      if (args.opts.html !== undefined) body.html = args.opts.html;
      if (args.opts.text !== undefined) body.text = args.opts.text;
      if (args.files.length) body[key] = await fs.promises.readFile(args.files[0], 'utf8');
      if (args.opts.url) body[key] = await fetchText(args.opts.url);
      return sync('POST', `/api/transformer/${encodeURIComponent(op)}`, { json: body });
    }
    case 'job': {
      const parameters = { ...Object.fromEntries(fields) };
      // A file is named by its absolute path: the server reads it (same machine, inside its INPUT_ROOTS).
      if (args.files.length) parameters.filename = path.resolve(args.files[0]);
      if (args.opts.url) parameters.url = args.opts.url;
      const r = await client.call('POST', '/api/jobs/', { json: { job_type: one(rest, 'TYPE'), parameters } });
      const jobId = r.body.data.job_id;
      if (args.flags.has('no-follow')) return printResult(r.body, json);
      if (!json) process.stderr.write(`job ${jobId}\n`);
      return finishJob(client, jobId, progress, json);
    }
    case 'follow':
      return finishJob(client, one(rest, 'JOB_ID'), progress, json);
    case 'get': {
      const r = await client.call('GET', `/api/jobs/${encodeURIComponent(one(rest, 'JOB_ID'))}`);
      return printResult(r.body, json, { whole: true });
    }
    case 'download': {
      const what = one(rest, 'JOB_ID or FILE_PATH');
      const urlPath = /^job-[0-9a-f-]+$/.test(what)
        ? `/api/jobs/${what}/download-archive`
        : `/api/event-job/files/${what.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`;
      const r = await client.download(urlPath, args.opts.out);
      if (r.status === 202)
        throw new ApiError(202, 'JOB_RUNNING', `${what} is still running; download it when it has finished`);
      if (r.file === '-') return;
      if (json)
        process.stdout.write(
          `${JSON.stringify({ status: 'success', data: { file: path.resolve(r.file), bytes: r.bytes, content_type: r.type } })}\n`,
        );
      else process.stderr.write(`saved ${r.file} (${r.bytes} bytes)\n`);
      return;
    }
    case 'call': {
      const [method, urlPath] = [one(rest, 'METHOD'), rest[1]];
      if (!urlPath || !urlPath.startsWith('/')) throw new UsageError('call needs METHOD and a PATH starting with /');
      if (args.files.length) {
        const files = args.files.map((f) =>
          /^[A-Za-z_][\w-]*=/.test(f) && !fs.existsSync(f) ? f.split(/=(.*)/s).slice(0, 2) : ['file', f],
        );
        return sync(method.toUpperCase(), urlPath, { form: await multipart(fields, files) });
      }
      const body =
        args.opts.body !== undefined
          ? parseBody(args.opts.body)
          : fields.length
            ? Object.fromEntries(fields)
            : undefined;
      return sync(method.toUpperCase(), urlPath, { json: body });
    }
    default:
      throw new UsageError(`unknown command "${command}" (docproc --help)`);
  }
}

async function finishJob(client, jobId, progress, json) {
  const end = await followJob(client, jobId, (body) => progress.update(body));
  progress.done();
  if (end.phase === 'failed') {
    const e = end.error ?? {};
    throw Object.assign(new ApiError(0, e.code ?? 'JOB_FAILED', e.message ?? 'the job failed', e.details), {
      jobId,
      jobFailed: true,
    });
  }
  printResult({ status: 'success', data: { job_id: jobId, status: 'completed', results: end.data ?? {} } }, json);
}

function one(rest, what) {
  if (!rest[0]) throw new UsageError(`missing ${what} (docproc --help)`);
  return rest[0];
}

function parseBody(s) {
  try {
    return JSON.parse(s);
  } catch {
    throw new UsageError('--body needs JSON');
  }
}

async function fetchText(url) {
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new ApiError(0, 'UNREACHABLE', `cannot fetch ${url}: ${err?.cause?.code ?? err?.message}`);
  }
  if (!res.ok) throw new ApiError(res.status, 'UPSTREAM_ERROR', `${url} answered ${res.status}`);
  return res.text();
}
