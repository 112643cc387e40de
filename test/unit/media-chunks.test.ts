import { expect } from 'chai';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { chunkTranscript, type MediaChunk } from '../../domain/chunks/media-chunks';
import type { AudioSegment } from '../../core/results/result-shapes';

// The transcript chunker (contract §14) on transcripts built here: budgets, sentence ends, pauses, speaker turns,
// times and segment indexes, overlap, and words that are never cut.

const exact = new Tiktoken(cl100k);
const opts = (maxTokens: number, extra: { overlapTokens?: number; speakers?: boolean } = {}) => ({
  maxTokens,
  overlapTokens: extra.overlapTokens ?? 0,
  tokenizer: 'cl100k_base' as const,
  speakers: extra.speakers ?? false,
});

/** Segments of sentences, 4 s each, words timed evenly inside, a speaker per segment when given. */
function transcript(sentences: string[], speakers?: string[], withWords = true): AudioSegment[] {
  return sentences.map((text, i) => {
    const words = text.split(' ');
    const start = i * 4;
    return {
      id: i,
      start,
      end: start + 3.5,
      text: ` ${text}`,
      ...(speakers ? { speaker: speakers[i] } : {}),
      ...(withWords
        ? {
            words: words.map((w, k) => ({
              word: ` ${w}`,
              start: start + (k * 3.5) / words.length,
              end: start + ((k + 0.8) * 3.5) / words.length,
              probability: 0.9,
              ...(speakers ? { speaker: speakers[i] } : {}),
            })),
          }
        : {}),
    } as AudioSegment;
  });
}

const sentence = (i: number) => `This is sentence number ${i} of the talk about rivers.`;

function checkBudget(chunks: MediaChunk[], max: number) {
  for (const c of chunks) {
    expect(exact.encode(c.text, [], []).length, c.text).to.equal(c.tokens);
    expect(c.tokens).to.be.at.most(max);
    expect(c.end).to.be.at.least(c.start);
  }
  chunks.forEach((c, i) => expect(c.index).to.equal(i));
}

describe('chunks of a transcript', () => {
  it('packs sentences within the budget, cut only at sentence ends, with times and segments', () => {
    const segs = transcript(Array.from({ length: 40 }, (_, i) => sentence(i)));
    const chunks = chunkTranscript(segs, opts(60));
    checkBudget(chunks, 60);
    expect(chunks.length).to.be.greaterThan(5);
    for (const c of chunks) expect(c.text).to.match(/\.$/);
    // Every sentence once, in order.
    expect(chunks.map((c) => c.text).join(' ')).to.equal(segs.map((s) => s.text.trim()).join(' '));
    expect(chunks[0].start).to.equal(0);
    expect(chunks[0].segments[0]).to.equal(0);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i].start).to.be.at.least(chunks[i - 1].end);
    expect(chunks[chunks.length - 1].segments).to.include(39);
    expect(chunks[0].speakers).to.deep.equal([]);
  });

  it('makes each change of speaker a boundary with diarize', () => {
    const who = ['SPEAKER_1', 'SPEAKER_1', 'SPEAKER_2', 'SPEAKER_1', 'SPEAKER_2', 'SPEAKER_2'];
    const segs = transcript(
      who.map((_, i) => sentence(i)),
      who,
    );
    const chunks = chunkTranscript(segs, opts(500, { speakers: true }));
    expect(chunks.map((c) => c.speakers)).to.deep.equal([['SPEAKER_1'], ['SPEAKER_2'], ['SPEAKER_1'], ['SPEAKER_2']]);
    expect(chunks.map((c) => c.segments)).to.deep.equal([[0, 1], [2], [3], [4, 5]]);
    // Without diarize the same transcript is one chunk, its speakers listed in order.
    const one = chunkTranscript(segs, opts(500));
    expect(one).to.have.length(1);
    expect(one[0].speakers).to.deep.equal(['SPEAKER_1', 'SPEAKER_2']);
  });

  it('cuts a long run without punctuation between words, at a pause where there is one', () => {
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`);
    const seg: AudioSegment = {
      id: 0,
      start: 0,
      end: 700,
      text: words.join(' '),
      // A pause of 2 s before every 50th word.
      words: words.map((w, i) => {
        const t = i + 2 * Math.floor(i / 50);
        return { word: ` ${w}`, start: t, end: t + 0.8, probability: 1 };
      }),
    } as AudioSegment;
    const chunks = chunkTranscript([seg], opts(100));
    checkBudget(chunks, 100);
    expect(chunks.flatMap((c) => c.text.split(' '))).to.deep.equal(words);
    // Each cut but the last falls at a pause: the next chunk starts at a multiple of 50.
    for (const c of chunks.slice(1))
      expect(Number(c.text.split(' ')[0].slice(4)) % 50, c.text.slice(0, 30)).to.equal(0);
  });

  it('times the words of segments without word timings by their place in the text', () => {
    const segs = transcript(
      Array.from({ length: 10 }, (_, i) => sentence(i)),
      undefined,
      false,
    );
    const chunks = chunkTranscript(segs, opts(30));
    checkBudget(chunks, 30);
    for (const c of chunks) {
      const seg = segs[c.segments[0]];
      expect(c.start).to.be.within(seg.start, seg.end);
    }
  });

  it('cuts a single huge segment and a word over the budget into parts that fit', () => {
    const words = Array.from({ length: 3000 }, (_, i) => `token${i % 97}.`);
    const segs: AudioSegment[] = [
      { id: 0, start: 0, end: 1000, text: words.join(' ') } as AudioSegment,
      { id: 1, start: 1000, end: 1001, text: 'x'.repeat(500) } as AudioSegment,
    ];
    const chunks = chunkTranscript(segs, opts(64));
    checkBudget(chunks, 64);
    expect(
      chunks
        .filter((c) => c.segments.includes(1))
        .map((c) => c.text)
        .join('')
        .replace(/[^x]/g, ''),
    ).to.have.length(500);
  });

  it('opens each chunk with the last sentences of the one before as overlap', () => {
    const segs = transcript(Array.from({ length: 30 }, (_, i) => sentence(i)));
    const chunks = chunkTranscript(segs, opts(80, { overlapTokens: 20 }));
    checkBudget(chunks, 80);
    for (let i = 1; i < chunks.length; i++) {
      const prevLast = chunks[i - 1].text.split('. ').pop()!;
      expect(chunks[i].text.startsWith(prevLast.replace(/\.$/, '')), chunks[i].text).to.equal(true);
    }
  });

  it('answers nothing for an empty transcript, and keeps a long one within the budget', () => {
    expect(chunkTranscript([], opts(100))).to.deep.equal([]);
    const segs = transcript(Array.from({ length: 2000 }, (_, i) => sentence(i)));
    const chunks = chunkTranscript(segs, opts(512));
    checkBudget(chunks, 512);
    expect(chunks.map((c) => c.text).join(' ')).to.equal(segs.map((s) => s.text.trim()).join(' '));
  });
});
