import path from 'node:path';
import type { Config } from './config';

type SpeechModelConfig = Pick<Config, 'SPEECH_PROVIDER' | 'SPEECH_MODEL' | 'SPEECH_MODEL_DIR' | 'speechApi'>;

/**
 * The name the local speech engine reports as its model (`Transcript.model`, part of the audio cache key): `whisper-base`
 * or `whisper-small` for the provisioned models, else the model directory's name.
 */
export function localSpeechModelName(config: Pick<Config, 'SPEECH_MODEL' | 'SPEECH_MODEL_DIR'>): string {
  const named = config.SPEECH_MODEL === 'base' || config.SPEECH_MODEL === 'small';
  return named
    ? `whisper-${config.SPEECH_MODEL}`
    : path.basename(path.resolve(config.SPEECH_MODEL_DIR ?? config.SPEECH_MODEL));
}

/**
 * The speech model identity the workers' provider describes (`SpeechProvider.describe().model`), from the configuration
 * alone: so the API builds the audio cache key (core/stores/cache-keys.ts `audioCacheKey`) as the `prepareAudio` activity does.
 */
export function speechModelId(config: SpeechModelConfig): string {
  if (config.SPEECH_PROVIDER === 'openai') return config.speechApi?.model ?? '';
  return localSpeechModelName(config);
}
