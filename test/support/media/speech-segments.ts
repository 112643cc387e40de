/** Checks on the segments of a transcription answer (speech tests). */
import { expect } from 'chai';

interface TimedSegment {
  id: number;
  start: number;
  end: number;
  text: string;
}

/** Segments in order: ids 0, 1, 2…; times increasing, never overlapping, inside the recording. */
export function expectOrderedSegments(segments: TimedSegment[], duration: number): void {
  expect(segments.length).to.be.at.least(1);
  segments.forEach((s, i) => {
    expect(s.id).to.equal(i);
    expect(s.end).to.be.at.least(s.start);
    expect(s.end).to.be.at.most(duration + 0.001);
    if (i > 0) expect(s.start, JSON.stringify(segments)).to.be.at.least(segments[i - 1].end);
  });
}

/** The text of the segments that overlap `[from, to]` seconds, in order. */
export const textDuring = (
  segments: Pick<TimedSegment, 'start' | 'end' | 'text'>[],
  from: number,
  to: number,
): string =>
  segments
    .filter((s) => s.end > from && s.start < to)
    .map((s) => s.text)
    .join(' ');
