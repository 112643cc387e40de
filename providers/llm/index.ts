export { UpstreamError } from './retry';
export { UsageRecorder } from './usage';
export { createLlmProvider, imagePart } from './openai.provider';
