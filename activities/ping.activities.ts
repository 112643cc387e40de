import { activityInfo } from '@temporalio/activity';

export function createPingActivities() {
  return {
    /** Answers with the task queue it ran on. */
    async pingActivity(): Promise<string> {
      return activityInfo().taskQueue;
    },
  };
}
