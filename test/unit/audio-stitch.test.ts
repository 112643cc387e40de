import { expect } from 'chai';
import { dominantLanguage, stitchSegments } from '../../activities/audio-results';
import type { ChunkTranscript } from '../../activities/audio-types';

const chunk = (
  index: number,
  start: number,
  end: number,
  language: string,
  segments: [number, number, string][],
): ChunkTranscript => ({
  index,
  start,
  end,
  language,
  text: segments.map((s) => s[2]).join(' '),
  segments: segments.map(([s, e, text]) => ({ start: s, end: e, text })),
  model: 'whisper-base',
  duration_ms: 10,
});

describe('audio results: stitching chunk transcripts', () => {
  it('moves each chunk’s segments by its start and numbers them from 0 across chunks', () => {
    const segs = stitchSegments([
      chunk(0, 0, 9.5, 'de', [
        [0, 4, ' Eins. '],
        [4.2, 9.1, 'Zwei.'],
      ]),
      chunk(1, 9.5, 20, 'de', [
        [0.3, 5, 'Drei.'],
        [5.5, 10.2, 'Vier.'],
      ]),
    ]);
    expect(segs).to.deep.equal([
      { id: 0, start: 0, end: 4, text: 'Eins.' },
      { id: 1, start: 4.2, end: 9.1, text: 'Zwei.' },
      { id: 2, start: 9.8, end: 14.5, text: 'Drei.' },
      { id: 3, start: 15, end: 19.7, text: 'Vier.' },
    ]);
  });

  it('keeps times inside their chunk, so a segment past the cut never overlaps the next chunk’s first one', () => {
    const segs = stitchSegments([chunk(0, 0, 10, 'en', [[0, 10.4, 'One.']]), chunk(1, 10, 20, 'en', [[0, 3, 'Two.']])]);
    expect(segs.map((s) => [s.start, s.end])).to.deep.equal([
      [0, 10],
      [10, 13],
    ]);
  });

  it('drops empty segments without leaving a gap in the ids', () => {
    const segs = stitchSegments([
      chunk(0, 0, 10, 'en', [
        [0, 1, '  '],
        [1, 2, 'Word.'],
      ]),
    ]);
    expect(segs).to.deep.equal([{ id: 0, start: 1, end: 2, text: 'Word.' }]);
  });

  it('detects the language of most audio seconds, else the fallback', () => {
    const chunks = [chunk(0, 0, 2, 'en', []), chunk(1, 2, 10, 'de', []), chunk(2, 10, 13, 'en', [])];
    expect(dominantLanguage(chunks, 'und')).to.equal('de');
    expect(dominantLanguage([chunk(0, 0, 4, 'und', [])], 'fr')).to.equal('fr');
  });
});

describe('audio results: word timings across chunks', () => {
  const withWords = (
    index: number,
    start: number,
    end: number,
    words: [string, number, number][],
  ): ChunkTranscript => ({
    index,
    start,
    end,
    language: 'en',
    text: words.map((w) => w[0]).join(''),
    segments: [
      {
        start: words[0][1],
        end: words.at(-1)![2],
        text: words.map((w) => w[0]).join(''),
        words: words.map(([word, s, e]) => ({ word, start: s, end: e, probability: 0.9 })),
      },
    ],
    model: 'whisper-base',
    duration_ms: 10,
  });

  it('moves words by their chunk’s start and keeps them ordered and inside their segment', () => {
    const segs = stitchSegments(
      [
        withWords(0, 0, 10, [
          [' One', 0.5, 0.9],
          [' two.', 1, 10.3],
        ]),
        withWords(1, 10, 20, [
          [' Three', 0.2, 0.6],
          [' four.', 0.7, 1.2],
        ]),
      ],
      { words: true },
    );
    expect(segs.map((s) => s.words)).to.deep.equal([
      [
        { word: ' One', start: 0.5, end: 0.9, probability: 0.9 },
        { word: ' two.', start: 1, end: 10, probability: 0.9 },
      ],
      [
        { word: ' Three', start: 10.2, end: 10.6, probability: 0.9 },
        { word: ' four.', start: 10.7, end: 11.2, probability: 0.9 },
      ],
    ]);
  });

  it('gives no words without the option, and an empty list for a chunk kept without them', () => {
    const c = chunk(0, 0, 5, 'en', [[0, 2, 'Old chunk.']]);
    expect(stitchSegments([c])[0]).not.to.have.property('words');
    expect(stitchSegments([c], { words: true })[0].words).to.deep.equal([]);
  });
});
