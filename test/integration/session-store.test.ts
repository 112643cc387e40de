import { expect } from 'chai';
import {
  listCachedSessions,
  listSessionEntries,
  listSessionRecords,
  putCachedSession,
  putSessionRecord,
  readSessionMarkdown,
} from '../../core/stores/session-store';
import { localBackend, s3Backend, type Backend } from '../support/stores/blob-backends';
import { sessionRecord } from '../support/sessions';

function sessionStoreContract(name: string, setup: () => Promise<Backend>): void {
  describe(`session store: ${name}`, function () {
    this.timeout(60_000);
    let b: Backend;

    beforeEach(async () => {
      b = await setup();
    });
    afterEach(async () => {
      await b.dispose().catch((e: Error) => process.stderr.write(`cleanup: ${e.message}\n`));
    });

    it('lists records by event, track, topic and language, and reads their Markdown', async () => {
      const recs = [
        sessionRecord({
          event: 'FOSDEM 2025',
          track: 'Open Hardware',
          session: 'RISC-V boards',
          topic: 'Hardware',
          tags: ['riscv'],
        }),
        sessionRecord({ event: 'FOSDEM 2025', track: 'Open Hardware', session: 'FPGA tooling', topic: 'Hardware' }),
        sessionRecord({ event: 'FOSDEM 2025', track: 'Rust', session: 'Async Rust', topic: 'Programmiersprachen' }),
        sessionRecord({
          event: 'FOSDEM 2025',
          track: 'Rust',
          session: 'Async Rust',
          language: 'en',
          topic: 'Languages',
        }),
        sessionRecord({ event: 'Konferenz Zürich', track: 'Rust', session: 'Embedded Rust – über alles', topic: '' }),
      ];
      for (const r of recs) {
        await b.store.put(r.markdown_key, `# ${r.session}\n\nBody of ${r.session}.\n`, { mime: 'text/markdown' });
        await putSessionRecord(b.store, r);
      }
      const all = await listSessionRecords(b.store);
      expect(all).to.have.length(5);
      expect(all.find((r) => r.session === 'RISC-V boards')).to.deep.equal(recs[0]);

      const names = (rs: { session: string }[]) => rs.map((r) => r.session).sort();
      expect(names(await listSessionRecords(b.store, { event: 'FOSDEM 2025' }))).to.deep.equal([
        'Async Rust',
        'Async Rust',
        'FPGA tooling',
        'RISC-V boards',
      ]);
      expect(names(await listSessionRecords(b.store, { track: 'Rust' }))).to.deep.equal([
        'Async Rust',
        'Async Rust',
        'Embedded Rust – über alles',
      ]);
      expect(names(await listSessionRecords(b.store, { track: 'Rust', language: 'de' }))).to.deep.equal([
        'Async Rust',
        'Embedded Rust – über alles',
      ]);
      expect(names(await listSessionRecords(b.store, { topic: 'Hardware' }))).to.deep.equal([
        'FPGA tooling',
        'RISC-V boards',
      ]);
      expect(names(await listSessionRecords(b.store, { event: 'Konferenz Zürich', track: 'Rust' }))).to.deep.equal([
        'Embedded Rust – über alles',
      ]);
      expect(await listSessionRecords(b.store, { event: 'Nope' })).to.deep.equal([]);
      expect(await listSessionRecords(b.store, { track: '../..' })).to.deep.equal([]);

      const entries = await listSessionEntries(b.store, { event: 'Konferenz Zürich' });
      expect(entries.map(({ key: _k, ...e }) => e)).to.deep.equal([
        { event: 'Konferenz Zürich', language: 'de', track: 'Rust', filename: 'Embedded Rust – über alles', topic: '' },
      ]);
      expect(await readSessionMarkdown(b.store, recs[4]!)).to.equal(
        '# Embedded Rust – über alles\n\nBody of Embedded Rust – über alles.\n',
      );
    });

    it('a record written again replaces the old one, also when its topic changed, and the newest wins a race', async () => {
      const first = sessionRecord({ event: 'E', track: 'T', session: 'S', topic: 'Old topic' });
      await putSessionRecord(b.store, first);
      const second = { ...first, topic: 'New topic', processed_at: '2025-02-02T10:00:00.000Z', job_id: 'job-2' };
      await putSessionRecord(b.store, second);
      expect(await listSessionRecords(b.store)).to.deep.equal([second]);
      expect(await listSessionRecords(b.store, { topic: 'Old topic' })).to.deep.equal([]);
      // An older record written late (a slow worker) does not replace the newer one.
      await putSessionRecord(b.store, first);
      expect(await listSessionRecords(b.store)).to.deep.equal([second]);
      expect(await b.store.listKeys('session-index/')).to.have.length(1);

      // Writers at once: every listing shows exactly one record per session, the newest.
      const racers = Array.from({ length: 8 }, (_, i) => ({
        ...first,
        topic: `Topic ${i}`,
        processed_at: `2025-03-0${i + 1}T00:00:00.000Z`,
      }));
      await Promise.all(racers.map((r) => putSessionRecord(b.store, r)));
      expect(await listSessionRecords(b.store)).to.deep.equal([racers[7]]);
    });

    it('the same file name in different tracks, events or languages is a different session', async () => {
      const base = { session: 'Intro', filename: 'intro' };
      await putSessionRecord(b.store, sessionRecord({ ...base, event: 'E1', track: 'A' }));
      await putSessionRecord(b.store, sessionRecord({ ...base, event: 'E1', track: 'B' }));
      await putSessionRecord(b.store, sessionRecord({ ...base, event: 'E2', track: 'A' }));
      await putSessionRecord(b.store, sessionRecord({ ...base, event: 'E1', track: 'A', language: 'en' }));
      expect(await listSessionEntries(b.store)).to.have.length(4);
      expect(await listSessionEntries(b.store, { track: 'A' })).to.have.length(3);
    });

    it('cached session entries are listed newest first, one per event, session and url', async () => {
      await putCachedSession(b.store, {
        event: 'E',
        session: 'S1',
        url: 'https://x.org/1',
        cached_at: '2025-01-01T00:00:00.000Z',
      });
      await putCachedSession(b.store, {
        event: 'E',
        session: 'S2',
        url: 'https://x.org/2',
        cached_at: '2025-01-02T00:00:00.000Z',
        job_id: 'job-9',
      });
      await putCachedSession(b.store, {
        event: 'E',
        session: 'S1',
        url: 'https://x.org/1',
        cached_at: '2025-01-03T00:00:00.000Z',
      });
      expect(await listCachedSessions(b.store)).to.deep.equal([
        { event: 'E', session: 'S1', url: 'https://x.org/1', cached_at: '2025-01-03T00:00:00.000Z' },
        { event: 'E', session: 'S2', url: 'https://x.org/2', cached_at: '2025-01-02T00:00:00.000Z', job_id: 'job-9' },
      ]);
    });
  });
}

sessionStoreContract('local', localBackend);
sessionStoreContract('s3', s3Backend);
