import { stopSharedServers } from './servers/engines';

/** Mocha root hook plugin: servers shared by several test files are stopped once at the end. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopSharedServers();
}
