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
