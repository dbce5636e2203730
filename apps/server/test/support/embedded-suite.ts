/**
 * One embedded server for a test file: started in a `beforeAll` (then `settings` applied live,
 * e.g. tiers lowered so that a few members make a group huge), stopped in an `afterAll` once
 * every client the file connected through it is closed. Call it at the top of the file.
 */
import { afterAll, beforeAll } from 'vitest';
import type { SettingsPatch } from '@seqline/messaging';
import { startTestServer, TestClient, type TestServer } from '../harness.ts';

export interface EmbeddedSuite {
  /** The running server (inside hooks and tests). */
  readonly server: TestServer;
  /** A client of `user` on the server, closed with the suite. */
  connect(user: string): Promise<TestClient>;
  /** A user id unique in this file: `prefix` and a counter. */
  user(prefix: string): string;
}

export function useEmbeddedServer(options: { settings?: SettingsPatch } = {}): EmbeddedSuite {
  let started: TestServer | undefined;
  const open: TestClient[] = [];
  let users = 0;
  beforeAll(async () => {
    started = await startTestServer();
    if (options.settings !== undefined) await started.settings.update(options.settings);
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await started?.stop();
  });
  const server = (): TestServer => {
    if (started === undefined) throw new Error('the suite server starts in beforeAll: use it inside hooks and tests');
    return started;
  };
  return {
    get server() {
      return server();
    },
    connect: async (user) => {
      const c = await TestClient.connect(server().url, user);
      open.push(c);
      return c;
    },
    user: (prefix) => `${prefix}${++users}`,
  };
}
