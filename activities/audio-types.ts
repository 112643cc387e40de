import type { SpeakerWindow, SpeechSegment } from '../domain/engines/speech';

/** Types the audio activities share (their own module, so audio.activities and audio-results import no cycle). */

/** A chunk of the recording, in seconds of the decoded audio. */
export interface AudioSpan {
  start: number;
  end: number;
}

/** What `prepareAudio` hands the workflow: small (no transcripts, no samples). */
export interface AudioPrepared {
  duration: number;
  chunks: AudioSpan[];
  /** The decoded 16 kHz mono WAV under the job (empty on a cache hit). */
  wavKey: string;
  wavSha256: string;
  /** The result cache answered: no chunk needs transcribing. */
  fromCache: boolean;
  /** The result-cache key of this recording under these parameters (a fresh result is written there). */
  cacheKey: string;
  /** Media slots of the worker that prepared it: the workflow keeps at most twice as many chunks in flight. */
  mediaSlots?: number;
  /** The transcription runs on a remote endpoint (`SPEECH_PROVIDER=openai`): its steps wait out an outage. */
  remoteSpeech?: boolean;
}

/** One chunk's transcript as kept under the job (`chunkKey`): times relative to the chunk's start. */
export interface ChunkTranscript {
  index: number;
  start: number;
  end: number;
  language: string;
  languageProbability?: number;
  text: string;
  segments: SpeechSegment[];
  model: string;
  duration_ms: number;
  /** With `diarize`: speaker embeddings of the chunk's speech, times relative to the chunk's start. */
  speakerWindows?: SpeakerWindow[];
}
