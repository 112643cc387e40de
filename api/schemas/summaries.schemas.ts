import { JOB_DEFAULTS } from '../../core/jobs/job-defaults';
import { z } from '../openapi';
import { lang } from './common.schemas';

/** The optional body of the track and event summaries and of stories (spec §4.5, §4.8, §4.9). */
export const summaryOptions = {
  template: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('A template (GET /api/transformer/templates) for the answer: its fields are filled from the summaries'),
  target_language: lang.optional().default(JOB_DEFAULTS.summary.target_language),
};
export const summaryBody = z.object(summaryOptions);
/** The body of the summary routes, which may be left out: the defaults then. */
export const optionalSummaryBody = summaryBody
  .optional()
  .default({ target_language: JOB_DEFAULTS.summary.target_language });

export const trackParam = z.object({ track_name: z.string().min(1).max(500) });
export const eventParam = z.object({ event_name: z.string().min(1).max(500) });

const named = z.object({ name: z.string(), session_count: z.number().int() });
export const trackList = z.object({ tracks: z.array(named.openapi('Track')) });
export const topicList = z.object({ topics: z.array(named.openapi('Topic')) });
export const targetGroupList = z.object({ target_groups: z.array(z.string()) });

/** The answers of the summary jobs (core/results/result-schemas-text.ts). */
export {
  eventSummaryResultData as eventSummary,
  storyResultData as story,
  trackSummariesResultData as trackSummaries,
  trackSummaryResultData as trackSummary,
} from '../../core/results/result-schemas-text';

export const storyBody = z.object({
  topic: z.string().min(1).max(500),
  target_group: z.string().min(1).max(200),
  ...summaryOptions,
});
