import { expect } from 'chai';
import { sessionInputParts } from '../../activities/session-output';
import { sessionGrounding } from '../../capabilities/grounding';
import {
  chunkTimes,
  MIN_WORDS,
  timeSessionChunks,
  tokensOf,
  transcriptSegments,
  transcriptTokens,
  type TimedSegment,
} from '../../domain/chunks/session-times';
import { groundFields } from '../../domain/grounding/ground';

// A session's times (contract §14): chunks of its Markdown timed where their words are the transcript's, never
// otherwise; grounded sources placed in the part of the session's text they stand in, a transcript's in time.

const SEGMENTS: TimedSegment[] = [
  { start: 0, end: 4, text: 'The weather was warm and sunny, so we walked to the park after lunch.' },
  {
    start: 4.5,
    end: 8,
    text: ' The children played near the old bridge until the evening.',
    words: [
      { word: ' The', start: 4.5, end: 4.7 },
      { word: ' children', start: 4.7, end: 5.2 },
      { word: ' played', start: 5.2, end: 5.6 },
      { word: ' near', start: 5.6, end: 5.9 },
      { word: ' the', start: 5.9, end: 6.0 },
      { word: ' old', start: 6.0, end: 6.3 },
      { word: ' bridge', start: 6.3, end: 6.9 },
      { word: ' until', start: 6.9, end: 7.2 },
      { word: ' the', start: 7.2, end: 7.3 },
      { word: ' evening.', start: 7.3, end: 8 },
    ],
  },
  { start: 8, end: 12, text: 'After dinner we read a book about open-source maps and the city.' },
];
const TRANSCRIPT = SEGMENTS.map((s) => s.text.trim()).join(' ');
const WORDS = transcriptTokens(SEGMENTS);

describe('session times: chunks timed where their words are the transcript', () => {
  it("keeps a result's segments only when they are its text's, spacing aside", () => {
    expect(transcriptSegments(TRANSCRIPT, SEGMENTS)).to.have.length(3);
    expect(transcriptSegments(`  ${SEGMENTS.map((s) => s.text).join('\n')} `, SEGMENTS)).to.have.length(3);
    // A translated (or templated) text: other words than the segments time.
    expect(transcriptSegments('Das Wetter war warm und sonnig.', SEGMENTS)).to.equal(null);
    expect(transcriptSegments(`${TRANSCRIPT} And more.`, SEGMENTS)).to.equal(null);
    expect(transcriptSegments(TRANSCRIPT, undefined)).to.equal(null);
    expect(transcriptSegments('', [])).to.equal(null);
    expect(transcriptSegments(TRANSCRIPT, [{ start: 'x', end: 1, text: TRANSCRIPT }])).to.equal(null);
    expect(transcriptSegments(TRANSCRIPT, [{ start: 0, end: 1, text: TRANSCRIPT, words: [{ word: 1 }] }])).to.equal(
      null,
    );
    // Only the times and texts are kept (no probabilities, no speakers).
    const [first] = transcriptSegments('a b', [{ id: 0, start: 0, end: 1, text: 'a b', speaker: 'S1', words: [] }])!;
    expect(first).to.deep.equal({ start: 0, end: 1, text: 'a b', words: [] });
  });

  it("times a segment's words by their own times, or by their place in its text without them", () => {
    expect(WORDS.map((w) => w.token).slice(0, 3)).to.deep.equal(['the', 'weather', 'was']);
    const children = WORDS.find((w) => w.token === 'children')!;
    expect(children).to.deep.equal({ token: 'children', start: 4.7, end: 5.2 });
    // Spread over the segment: later words later, inside it.
    const weather = WORDS[1]!;
    const lunch = WORDS.find((w) => w.token === 'lunch')!;
    expect(weather.start).to.be.above(0).and.below(1);
    expect(lunch.end).to.be.above(3.5).and.at.most(4);
    // `open-source`: two words for matching, in the text's order.
    const i = WORDS.findIndex((w) => w.token === 'open');
    expect(WORDS[i + 1]!.token).to.equal('source');
  });

  it("times a chunk of the transcript's words, across segments, up to case, punctuation and markup", () => {
    const t = chunkTimes(
      '> the CHILDREN played near the old **bridge** until the evening. After dinner we read',
      WORDS,
    );
    expect(t).to.deep.equal({ start: 4.5, end: WORDS.find((w) => w.token === 'read')!.end });
    expect(t!.start).to.be.below(t!.end);
    // A short chunk: all its words as one run.
    expect(chunkTimes('near the old bridge', WORDS)).to.deep.equal({ start: 5.6, end: 6.9 });
    // A whole transcript.
    const all = chunkTimes(TRANSCRIPT, WORDS)!;
    expect(all.start).to.be.at.least(0).and.below(0.5);
    expect(all.end).to.be.above(11.5).and.at.most(12);
  });

  it('gives no times to a chunk the transcript does not hold, never guessing', () => {
    // Words of the page or the summary.
    expect(chunkTimes('Abstract of open maps: how volunteers map the city for everyone.', WORDS)).to.equal(null);
    // The same words out of order.
    expect(chunkTimes('the old bridge near played children the', WORDS)).to.equal(null);
    // A head that is the transcript's and a tail that is not.
    expect(
      chunkTimes('The children played near the old bridge until the evening, said nobody in the talk at all.', WORDS),
    ).to.equal(null);
    // Too few words to tell.
    expect(tokensOf('the park')).to.have.length.below(MIN_WORDS);
    expect(chunkTimes('the park', WORDS)).to.equal(null);
    expect(chunkTimes('the old bridge until', [])).to.equal(null);
  });

  it('needs the edges no more than twice the chunk apart', () => {
    // Head and tail found in order, but with the whole transcript between them: a chunk of 12 + 1 words.
    const filler = Array.from({ length: 40 }, (_, k) => ({ token: `w${k}`, start: 10 + k, end: 10.5 + k }));
    const head = tokensOf('one two three four five six').map((token, k) => ({ token, start: k, end: k + 0.5 }));
    const tail = tokensOf('seven eight nine ten eleven twelve').map((token, k) => ({
      token,
      start: 60 + k,
      end: 60.5 + k,
    }));
    const words = [...head, ...filler, ...tail];
    expect(chunkTimes('one two three four five six gap seven eight nine ten eleven twelve', words)).to.equal(null);
    // The same edges close together.
    expect(
      chunkTimes('one two three four five six gap seven eight nine ten eleven twelve', [...head, ...tail]),
    ).to.deep.equal({
      start: 0,
      end: 65.5,
    });
  });

  it('times only the chunks of transcript words, and none without segments', () => {
    const chunks = [
      { index: 0, text: '# Open maps for everyone\n\nAbstract of open maps.' },
      { index: 1, text: 'The children played near the old bridge until the evening.' },
    ];
    const timed = timeSessionChunks(chunks, SEGMENTS);
    expect(timed[0]).to.deep.equal(chunks[0]);
    expect(timed[1]).to.deep.equal({ ...chunks[1], start: 4.5, end: 8 });
    expect(timeSessionChunks(chunks, null)).to.deep.equal(chunks);
  });
});

describe('session grounding: sources in the part of the session text they stand in', () => {
  const page = '\n\n  # Session open maps\n\nAbstract: how volunteers map the city.\n';
  const attachments = '### slides\n\nVector tiles served from a single laptop';
  const { text, parts } = sessionInputParts(page, TRANSCRIPT, attachments);
  const own = { page, transcript: TRANSCRIPT, attachments } as const;

  it("lays out the parts under their headings, each part's text a prefix of its own after the trimmed space", () => {
    expect(text.startsWith('## Session page\n\n# Session open maps')).to.equal(true);
    expect(parts.map((p) => p.name)).to.deep.equal(['page', 'transcript', 'attachments']);
    for (const p of parts)
      expect(own[p.name].slice(p.offset, p.offset + p.end - p.start)).to.equal(text.slice(p.start, p.end));
    expect(parts[0]!.offset).to.equal(4);
    // An empty part has no heading and no place.
    expect(sessionInputParts('', ' \n', attachments).parts.map((p) => p.name)).to.deep.equal(['attachments']);
  });

  it("gives each source its part and offsets into that part's text, the transcript's its seconds", () => {
    const fields = {
      title: 'how volunteers map the city',
      summary: 'near the old bridge',
      slides: 'Vector tiles served from a single laptop',
      invented: 'Quantum chromodynamics lectures',
      heading: 'Transcript of the recording',
      points: ['volunteers map the city', 'the children played'],
      empty: '',
    };
    const g = groundFields(fields, text);
    const placed = sessionGrounding(
      { template_fields: g.fields, template_sources: g.sources, unsupported_fields: g.unsupported },
      parts,
      { text: TRANSCRIPT, segments: SEGMENTS },
    )!;
    const src = placed.template_sources;
    expect(src.title).to.include({ part: 'page', text: 'how volunteers map the city' });
    expect(src.summary).to.deep.include({ part: 'transcript', text: 'near the old bridge', start_s: 5.6, end_s: 6.9 });
    expect(src.slides).to.include({ part: 'attachments' });
    for (const name of ['title', 'summary', 'slides'] as const) {
      const s = src[name]!;
      expect(own[s.part!].slice(s.start, s.end), name).to.equal(s.text);
    }
    // Only the transcript is timed.
    expect(src.title).to.not.have.property('start_s');
    // A value the text does not hold: null, named, emptied; an empty field: null, not named.
    expect(src.invented).to.equal(null);
    expect(src.empty).to.equal(null);
    expect(placed.unsupported_fields).to.deep.equal(['invented']);
    expect(placed.template_fields.invented).to.equal('');
    // A heading between the parts: no part, offsets into the input text.
    expect(src.heading).to.not.have.property('part');
    expect(text.slice(src.heading!.start, src.heading!.end)).to.equal(src.heading!.text);
    // A list whose items stand in two parts: the field's span names none, each item its own.
    expect(src.points).to.not.have.property('part');
    expect(text.slice(src.points!.start, src.points!.end)).to.equal(src.points!.text);
    expect(src.points!.items!.map((i) => i.part)).to.deep.equal(['page', 'transcript']);
    for (const i of src.points!.items!) expect(own[i.part!].slice(i.start, i.end)).to.equal(i.text);
    expect(src.points!.items![1]).to.have.property('start_s');
  });

  it('places in parts but not in time when the transcript has no segments, and is absent without grounding', () => {
    const g = groundFields({ summary: 'near the old bridge' }, text);
    const placed = sessionGrounding(
      { template_fields: g.fields, template_sources: g.sources, unsupported_fields: [] },
      parts,
      null,
    )!;
    expect(placed.template_sources.summary).to.include({ part: 'transcript' }).and.not.have.property('start_s');
    expect(sessionGrounding({ template_fields: {} }, parts, null)).to.equal(undefined);
  });
});
