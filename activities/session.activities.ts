import type { ActivityDeps } from './deps';
import { createSessionOutputActivities } from './session-output';
import { createSessionSourceActivities } from './session-sources';

/**
 * The session job type's activities (spec §4.6): its sources (`session-sources.ts`) and its output
 * (`session-output.ts`).
 */
export function createSessionActivities(deps: ActivityDeps) {
  return { ...createSessionSourceActivities(deps), ...createSessionOutputActivities(deps) };
}
