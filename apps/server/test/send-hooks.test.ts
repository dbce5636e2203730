/**
 * The send hooks scenarios (send-hooks-scenarios.ts) against the embedded server, plus what
 * only the embedded harness can steer live: a read-fanout group (tiers lowered) whose stream a
 * deny leaves untouched.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, type TestServer } from './harness.ts';
import { describeSendHooks, groupMates, headOf, hookEnv, HOOK_SECRET, type SendHookContext } from './send-hooks-scenarios.ts';

let server: TestServer;
let before: HookReceiver;
let after: HookReceiver;
const open: TestClient[] = [];
let ids = 0;

const ctx: SendHookContext = {
  connect: async (user) => {
    const c = await TestClient.connect(server.url, user);
    open.push(c);
    return c;
  },
  id: (prefix) => `${prefix}${++ids}`,
  get before() {
    return before;
  },
  get after() {
    return after;
  },
};

beforeAll(async () => {
  before = await startHookReceiver({ secret: HOOK_SECRET, mode: { kind: 'answer', answer: () => ({ allow: true }) } });
  after = await startHookReceiver({ secret: HOOK_SECRET });
  server = await startTestServer(hookEnv(before, after));
});
afterAll(async () => {
  for (const c of open) c.close();
  await server.stop();
  await before.close();
  await after.close();
});

describeSendHooks('embedded', () => ctx);

describe('send hooks (embedded only)', () => {
  it('read-fanout: a denied group message leaves the group stream and every inbox as they were; an allowed one goes once', async () => {
    const tiers = server.settings.tiers();
    await server.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
    try {
      const { group, clients } = await groupMates(ctx, 4);
      const [alice] = clients as [TestClient];
      const info = await alice.ok<{ fanout: string; headGseq: number }>('group.info', { group });
      expect(info.fanout).toBe('read');
      const heads = await Promise.all(clients.map(headOf));
      before.setMode({ kind: 'answer', answer: () => ({ allow: false, reason: 'no' }) });
      const denied = appinfo();
      expect(await alice.call('send', { appinfo: denied, to: { group }, type: 'text', body: {} })).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN' },
      });
      expect((await alice.ok<{ headGseq: number }>('group.info', { group })).headGseq).toBe(info.headGseq);
      expect(await Promise.all(clients.map(headOf))).toEqual(heads);
      before.setMode({ kind: 'answer', answer: () => ({ allow: true, body: { rewritten: true } }) });
      const allowed = appinfo();
      const r = await alice.ok<{ seq: number; body?: unknown }>('send', { appinfo: allowed, to: { group }, type: 'text', body: {} });
      expect(r.body).toEqual({ rewritten: true });
      const history = await alice.ok<{ messages: Array<{ appinfo: string; body: unknown }> }>('group.history', { group, limit: 10 });
      expect(history.messages.filter((m) => m.appinfo === allowed).map((m) => m.body)).toEqual([{ rewritten: true }]);
      await waitAccepted(allowed);
    } finally {
      before.setMode({ kind: 'answer', answer: () => ({ allow: true }) });
      await server.settings.update({ tiers });
    }
  });
});

async function waitAccepted(app: string): Promise<void> {
  await waitUntil(() => after.accepted().some((c) => (c.json as { appinfo?: string } | undefined)?.appinfo === app));
}

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
