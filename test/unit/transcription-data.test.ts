import { expect } from 'chai';
import { loadConfig } from '../../core/config/config';
import { audioData, videoData, type AudioOutcome } from '../../core/results/result-shapes';
import { speechModelId } from '../../core/config/speech-model';
import { subtitles } from '../../core/results/subtitles';
import { transcriptionData } from '../../core/results/transcription-data';
import { localSpeechOptions } from '../../providers/speech/local';

const outcome: AudioOutcome = {
  duration: 4.2,
  detected_language: 'en',
  original_text: 'Hello there. Good bye.',
  output_text: 'Hello there. Good bye.',
  translated_text: null,
  llm_model: null,
  translation_model: null,
  token_count: 0,
  segments: [
    {
      id: 0,
      start: 0,
      end: 1.5,
      text: 'Hello there.',
      words: [
        { word: ' Hello', start: 0, end: 0.6, probability: 0.9 },
        { word: ' there.', start: 0.7, end: 1.5, probability: 0.8 },
      ],
    },
    {
      id: 1,
      start: 2.5,
      end: 4,
      text: 'Good bye.',
      words: [
        { word: ' Good', start: 2.5, end: 3, probability: 0.9 },
        { word: ' bye.', start: 3.1, end: 4, probability: 0.7 },
      ],
    },
  ],
};
const job = { process_id: 'job-1', process_dir: 'jobs/job-1/out' };
const picture = { resolution: '320x240', codec: 'h264', fps: 25, duration: 4.3 };

describe('the data of an audio or video answer (core/results/transcription-data.ts) and the speech model name (core/config/speech-model.ts)', () => {
  it('shows word timings only when asked, and adds the subtitles cut from the timed words either way', () => {
    const plain = transcriptionData(outcome, { word_timestamps: false, subtitles: 'srt' }, (o) => audioData(o, job));
    for (const seg of plain.segments as object[]) expect(seg).to.have.all.keys('id', 'start', 'end', 'text');
    expect(plain.subtitles).to.equal(subtitles(outcome.segments, 'srt'));
    expect(plain.subtitles).to.match(/^1\n00:00:00,000 --> /);
    const timed = transcriptionData(outcome, { word_timestamps: true }, (o) => audioData(o, job));
    expect(timed.segments).to.deep.equal(outcome.segments);
    expect(timed).to.not.have.property('subtitles');
    expect(timed).to.include({ process_id: 'job-1', process_dir: 'jobs/job-1/out' });
  });

  it("gives a video's data segments only with word timings (spec §4.7 shape otherwise)", () => {
    const plain = transcriptionData(outcome, { word_timestamps: false }, (o) => videoData(o, picture));
    expect(plain).to.deep.equal({
      duration: 4.3,
      transcription: outcome.output_text,
      metadata: { resolution: '320x240', codec: 'h264', fps: 25 },
    });
    const timed = transcriptionData(outcome, { word_timestamps: true, subtitles: 'vtt' }, (o) => videoData(o, picture));
    expect(Object.keys(timed)).to.deep.equal(['duration', 'transcription', 'metadata', 'segments', 'subtitles']);
    expect(String(timed.subtitles).startsWith('WEBVTT\n\n')).to.equal(true);
  });

  it('names the speech model from the configuration as the providers describe it', () => {
    for (const env of [
      {},
      { SPEECH_MODEL: 'small' },
      { SPEECH_MODEL: '/models/my-whisper' },
      { SPEECH_MODEL_DIR: '/m/x' },
    ]) {
      const config = loadConfig(env);
      expect(speechModelId(config), JSON.stringify(env)).to.equal(localSpeechOptions(config).model);
    }
    expect(speechModelId(loadConfig({}))).to.equal('whisper-base');
    expect(speechModelId(loadConfig({ SPEECH_MODEL: '/models/my-whisper' }))).to.equal('my-whisper');
    const remote = loadConfig({ SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: 'https://speech.example/v1' });
    expect(speechModelId(remote)).to.equal('whisper-1');
    expect(
      speechModelId(
        loadConfig({ SPEECH_PROVIDER: 'openai', SPEECH_BASE_URL: 'https://s.example/v1', SPEECH_MODEL: 'large' }),
      ),
    ).to.equal('large');
  });
});
