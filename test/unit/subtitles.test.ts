import { expect } from 'chai';
import { BROADCAST_RULES, breakLines, buildCues, formatCues, subtitles, timecode } from '../../core/results/subtitles';

/** Words of a sentence spoken at `rate` seconds per word from `start`, each with its leading space. */
function sentence(text: string, start: number, rate = 0.4) {
  const words = text
    .split(' ')
    .map((w, i) => ({ word: ` ${w}`, start: start + i * rate, end: start + (i + 1) * rate - 0.05 }));
  return { start, end: words.at(-1)!.end, text, words };
}

const cueText = (c: { lines: string[] }) => c.lines.join(' ');

describe('subtitles (core/results/subtitles.ts)', () => {
  it('formats SRT and WebVTT time codes', () => {
    expect(timecode(3723.4567, 'srt')).to.equal('01:02:03,457');
    expect(timecode(0.0004, 'vtt')).to.equal('00:00:00.000');
    expect(timecode(59.9996, 'vtt')).to.equal('00:01:00.000');
  });

  it('breaks a long text into two balanced lines of at most 42 characters, else answers null', () => {
    const lines = breakLines('The train to Berlin leaves one hour later than planned today.')!;
    expect(lines).to.have.length(2);
    for (const l of lines) expect(l.length).to.be.at.most(42);
    expect(Math.abs(lines[0].length - lines[1].length)).to.be.at.most(12);
    expect(breakLines('short line')).to.deep.equal(['short line']);
    expect(breakLines('x'.repeat(30) + ' ' + 'y'.repeat(30) + ' ' + 'z'.repeat(30))).to.equal(null);
  });

  it('ends a cue at each sentence end and times it from its first and last word', () => {
    const cues = buildCues([sentence('Good morning everyone.', 0), sentence('We start now.', 1.3)]);
    expect(cues.map(cueText)).to.deep.equal(['Good morning everyone.', 'We start now.']);
    expect(cues[0].start).to.equal(0);
    expect(cues[0].end).to.be.closeTo(1.15, 1e-9);
    expect(cues[1].start).to.equal(1.3);
  });

  it('ends a cue at a pause even inside a sentence', () => {
    const a = sentence('and then after a long', 0);
    const b = sentence('silence he went on', a.end + 2);
    const cues = buildCues([{ ...a, words: [...a.words, ...b.words], end: b.end, text: `${a.text} ${b.text}` }]);
    expect(cues.map(cueText)).to.deep.equal(['and then after a long', 'silence he went on']);
  });

  it('keeps every cue within 2 lines of 42 characters and 7 s, in order, losing no word', () => {
    const text =
      'this is a rather long stretch of speech without any punctuation that goes on and on for quite a while ' +
      'because the speaker never stops to breathe and keeps adding more words to the same sentence';
    const seg = sentence(text, 5, 0.3);
    const cues = buildCues([seg]);
    expect(cues.length).to.be.at.least(3);
    cues.forEach((c, i) => {
      expect(c.lines.length).to.be.within(1, BROADCAST_RULES.maxLines);
      for (const l of c.lines) expect(l.length).to.be.at.most(42);
      expect(c.end - c.start).to.be.at.most(7);
      if (i > 0) expect(c.start).to.be.at.least(cues[i - 1].end);
    });
    expect(cues.map(cueText).join(' ')).to.equal(text);
  });

  it('cuts a segment without word timings by words, its time shared out by their length', () => {
    const cues = buildCues([{ start: 10, end: 12, text: 'Hello there. Bye.' }]);
    expect(cues.map(cueText)).to.deep.equal(['Hello there.', 'Bye.']);
    expect(cues[0].start).to.equal(10);
    expect(cues[1].end).to.be.closeTo(12, 1e-9);
  });

  it('writes SRT with numbered cues and WebVTT with its header; nothing heard gives an empty file', () => {
    const segs = [sentence('One.', 0), sentence('Two.', 2)];
    expect(subtitles(segs, 'srt')).to.equal(
      '1\n00:00:00,000 --> 00:00:00,350\nOne.\n\n2\n00:00:02,000 --> 00:00:02,350\nTwo.\n',
    );
    expect(subtitles(segs, 'vtt')).to.equal(
      'WEBVTT\n\n00:00:00.000 --> 00:00:00.350\nOne.\n\n00:00:02.000 --> 00:00:02.350\nTwo.\n',
    );
    expect(formatCues([], 'srt')).to.equal('');
    expect(formatCues([], 'vtt')).to.equal('WEBVTT\n\n');
  });

  it('with speaker labels a cue never spans a turn: SRT marks each turn, WebVTT makes every cue a voice span', () => {
    const a = sentence('we should leave early tomorrow', 0, 0.3);
    // The second speaker answers without a pause and without a sentence end: only the turn ends the cue.
    const b = sentence('yes at nine', a.end + 0.1, 0.3);
    const c = sentence('and take the old road through the hills past the lake and the village', b.end + 0.1, 0.3);
    const label = (seg: ReturnType<typeof sentence>, speaker: string) => ({
      ...seg,
      speaker,
      words: seg.words.map((w) => ({ ...w, speaker })),
    });
    const segments = [label(a, 'SPEAKER_1'), label(b, 'SPEAKER_2'), label(c, 'SPEAKER_2')];
    const srt = buildCues(segments, BROADCAST_RULES, { markTurns: true });
    expect(srt.map(cueText)).to.deep.equal([
      '[SPEAKER_1] we should leave early tomorrow',
      '[SPEAKER_2] yes at nine and take the old road through the hills past the lake and',
      'the village',
    ]);
    for (const cue of srt) for (const line of cue.lines) expect(line.length, line).to.be.at.most(42);
    expect(srt.map((x) => x.speaker)).to.deep.equal(['SPEAKER_1', 'SPEAKER_2', 'SPEAKER_2']);
    const vtt = subtitles(segments, 'vtt');
    expect(vtt).to.include('\n<v SPEAKER_1>we should leave early tomorrow\n');
    expect(vtt.match(/<v SPEAKER_\d>/g)?.length).to.equal(vtt.match(/ --> /g)?.length);
    expect(vtt).to.include('\n<v SPEAKER_2>yes at nine');
    expect(vtt).not.to.include('[SPEAKER');
    // Without labels nothing changes.
    expect(subtitles([a, b, c], 'srt')).not.to.match(/SPEAKER|<v /);
  });
});
