import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { useStack, type Stack } from '../support/servers/stack';
import { ROOT } from '../support/servers/processes';
import { tempDir } from '../support/servers/engines';
import { SENTENCES, speak } from '../support/media/speech-samples';

// bin/docproc as a child process (as a user runs it) against the real API and worker on a Temporal dev server.

const KEY = 'cli-test-key-5f3a';
const SAMPLE = path.join(ROOT, 'samples/sample.pdf');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/docproc` with only the environment given (no inherited key or URL); never blocks this process. */
function docproc(args: string[], env: Record<string, string>, cwd = ROOT): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DOCPROC_|SERVICE_API_KEY)/.test(k)));
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/docproc'), ...args], {
    cwd,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('the docproc command-line client', function () {
  this.timeout(120_000);
  let stack: Stack;
  useStack((s) => (stack = s), { SERVICE_API_KEY: KEY });
  const env = () => ({ DOCPROC_URL: stack.url, DOCPROC_API_KEY: KEY });
  const work = tempDir('docproc-cli-');

  it('reads a PDF synchronously; --json prints the envelope, and the plain output is its text', async () => {
    const j = await docproc(['pdf', SAMPLE, '--method', 'native', '--json'], env());
    expect(j.code, j.stderr).to.equal(0);
    expect(j.stderr).to.equal('');
    const body = JSON.parse(j.stdout);
    expect(body.status).to.equal('success');
    expect(body.data.metadata.text_contents[0].method).to.equal('native');
    expect(body.data.extracted_text.trim()).to.not.equal('');
    const plain = await docproc(['pdf', SAMPLE, '--method', 'native'], env());
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stdout.trimEnd()).to.equal(body.data.extracted_text.trimEnd());
  });

  it('reads a Word document as Markdown with `document --markdown`, and its text without', async () => {
    const docx = path.join(ROOT, 'samples/sample.docx');
    const md = await docproc(['document', docx, '--markdown'], env());
    expect(md.code, md.stderr).to.equal(0);
    expect(md.stdout)
      .to.include('# Open maps for everyone\n')
      .and.match(/^\| Berlin \| 310 \|$/m);
    const text = await docproc(['document', docx, '--json'], env());
    expect(text.code, text.stderr).to.equal(0);
    const body = JSON.parse(text.stdout);
    expect(body.data.metadata.format).to.equal('docx');
    expect(body.data).to.not.have.property('markdown');
  });

  it('sends a file with --async as Prefer: respond-async and follows the job it is handed to the same text', async () => {
    const sync = JSON.parse((await docproc(['pdf', SAMPLE, '--method', 'native', '--json'], env())).stdout);
    const r = await docproc(['pdf', SAMPLE, '--method', 'native', '--async'], env());
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/running as job-[0-9a-f-]+; following it/);
    expect(r.stdout).to.include(sync.data.extracted_text.trim().split('\n')[0]);
  });

  it('follows a job to completion with progress lines from the event stream, then downloads its archive and a file', async () => {
    // The server reads a job's file by path: a copy in the system temp directory (an input root on loopback).
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'docproc-cli-in-')), 'scan.pdf');
    fs.copyFileSync(SAMPLE, file);
    const r = await docproc(['job', 'pdf', '--file', file, '--field', 'extraction_method=local_ocr'], env());
    expect(r.code, r.stderr).to.equal(0);
    const jobId = /^job (job-[0-9a-f-]+)$/m.exec(r.stderr)?.[1];
    expect(jobId, r.stderr).to.be.a('string');
    const percents = [...r.stderr.matchAll(/^progress +(\d+)% /gm)].map((m) => Number(m[1]));
    expect(percents.length, r.stderr).to.be.at.least(2);
    expect([...percents].sort((a, b) => a - b)).to.deep.equal(percents);
    const job = (await stack.call('GET', `/api/jobs/${jobId}`, undefined, { Authorization: `Bearer ${KEY}` })).body
      .data;
    expect(job.status).to.equal('completed');
    expect(r.stdout.trimEnd()).to.equal(job.results.extracted_text.trimEnd());

    const zip = await docproc(['download', jobId!, '-o', path.join(work, 'job.zip')], env());
    expect(zip.code, zip.stderr).to.equal(0);
    expect(fs.readFileSync(path.join(work, 'job.zip')).subarray(0, 2).toString()).to.equal('PK');
    const asset = (job.results.assets as string[]).find((a) => a.endsWith('result.md'))!;
    const md = await docproc(['download', asset, '--json'], env(), work);
    expect(md.code, md.stderr).to.equal(0);
    const saved = JSON.parse(md.stdout).data;
    expect(saved.file).to.equal(path.join(work, 'result.md'));
    expect(fs.readFileSync(saved.file, 'utf8').trimEnd()).to.equal(job.results.extracted_text.trimEnd());
  });

  it('writes the subtitles of a recording to the file --subtitles names, in its format (srt), sync and followed', async () => {
    const wav = await speak(SENTENCES.en, 'en', work, 'cli-en');
    const fields = ['--field', 'source_language=en', '--field', 'target_language=en'];
    const out = path.join(work, 'talk.srt');
    const r = await docproc(['audio', wav, '--subtitles', out, ...fields], env());
    expect(r.code, r.stderr).to.equal(0);
    const srt = fs.readFileSync(out, 'utf8');
    expect(srt).to.match(/^1\n00:00:0\d,\d{3} --> 00:00:\d\d,\d{3}\n/);
    expect(srt.toLowerCase()).to.match(/park|children|bridge/);
    const vtt = path.join(work, 'talk.vtt');
    const followed = await docproc(['audio', wav, '--async', '--subtitles', vtt, ...fields], env());
    expect(followed.code, followed.stderr).to.equal(0);
    expect(followed.stderr).to.match(/running as job-/);
    expect(fs.readFileSync(vtt, 'utf8')).to.match(/^WEBVTT\n\n00:00:0\d\.\d{3} --> /);
    const bad = await docproc(['audio', wav, '--subtitles', path.join(work, 'x.txt')], env());
    expect(bad.code).to.equal(2);
  });

  it('prints only JSON with --json for a followed job and a generic call', async () => {
    const r = await docproc(
      ['job', 'transformer', '--field', 'operation=html-to-markdown', '--field', 'html=<h1>CLI</h1>', '--json'],
      env(),
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.equal('');
    const body = JSON.parse(r.stdout);
    expect(body.data.status).to.equal('completed');
    expect(body.data.results.markdown).to.equal('# CLI');
    const c = await docproc(
      ['call', 'POST', '/api/transformer/html-to-markdown', '--field', 'html=<h2>x</h2>', '--json'],
      env(),
    );
    expect(c.code, c.stderr).to.equal(0);
    expect(JSON.parse(c.stdout).data.markdown).to.equal('## x');
  });

  it('fails with the envelope code and its exit code: a wrong key (never printed), an unknown job, a usage error', async () => {
    const bad = await docproc(['pdf', SAMPLE], { DOCPROC_URL: stack.url, DOCPROC_API_KEY: 'wrong-secret-77' });
    expect(bad.code).to.equal(3);
    expect(bad.stderr).to.match(/^docproc: UNAUTHORIZED \(401\): /);
    expect(bad.stdout + bad.stderr).to.not.include('wrong-secret-77');
    const badJson = await docproc(['get', 'job-00000000-0000-4000-8000-000000000000', '--json'], {
      DOCPROC_URL: stack.url,
      SERVICE_API_KEY: 'wrong-secret-77',
    });
    expect(badJson.code).to.equal(3);
    expect(JSON.parse(badJson.stdout).error.code).to.equal('UNAUTHORIZED');
    const missing = await docproc(['get', 'job-00000000-0000-4000-8000-000000000000', '--json'], env());
    expect(missing.code).to.equal(4);
    expect(JSON.parse(missing.stdout).error.code).to.match(/NOT_FOUND$/);
    const usage = await docproc(['pdf', SAMPLE, '--no-such-option'], env());
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.include('unknown option --no-such-option');
  });
});
