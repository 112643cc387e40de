export * from './types';
export { UpstreamError, parseRetryAfter, backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './retry';
export { UsageRecorder, computeCost } from './usage';
export {
  OpenAiLlmProvider,
  createLlmProvider,
  requireLlm,
  imagePart,
  parseJsonObject,
  type OpenAiLlmOptions,
} from './openai.provider';
