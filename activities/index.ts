import type { BlobStore } from '../core/blob-store';
import type { Config } from '../core/config';
import type { Logger } from '../core/logger';
import { createPingActivities } from './ping.activities';

export interface ActivityDeps {
  config: Config;
  logger: Logger;
  store: BlobStore;
}

/** Every activity, built from injected dependencies. Workflows import only this function's return type. */
export function createActivities(deps?: ActivityDeps) {
  void deps;
  return {
    ...createPingActivities(),
  };
}
