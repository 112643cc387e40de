// The format checks are pure and shared with the API: they live in core/ (media-formats.ts, input-budgets.ts).
// Re-exported here for the activities that import them from the media provider.
export {
  SUPPORTED_FORMATS,
  audioFormatOf,
  containerFormatOf,
  transcribableVideo,
  videoMetadata,
  type AudioFormat,
  type VideoMetadata,
} from '../../core/media-formats';
export { checkDuration } from '../../core/input-budgets';
