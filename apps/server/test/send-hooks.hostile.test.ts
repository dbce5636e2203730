/**
 * A before-send hook that fails in every way it can — no answer, nobody listening, 5xx, not
 * JSON, the wrong shape, a rewrite the protocol refuses — against the embedded server, in both
 * failure modes. Fail-closed: a typed error and nothing stored anywhere. Fail-open: the body as
 * sent is stored and the reply says nothing was rewritten. Nothing is lost either way.
 */
import { startHookReceiver, type HookReceiver, type HookReceiverMode } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './child-server.ts';
import { appinfo, startTestServer, TestClient, type TestServer } from './harness.ts';
import { callsFor, groupMates, headOf, holds, hookEnv, HOOK_SECRET, type SendHookContext } from './send-hooks-scenarios.ts';

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
  id: (prefix) => `h${prefix}${++ids}`,
  get before() {
    return before;
  },
  get after() {
    return after;
  },
};

beforeAll(async () => {
  before = await startHookReceiver({ secret: HOOK_SECRET });
  after = await startHookReceiver({ secret: HOOK_SECRET });
  server = await startTestServer({ ...hookEnv(before, after), SEQLINE_BEFORE_SEND_TIMEOUT_MS: '300' });
});
afterAll(async () => {
  for (const c of open) c.close();
  await server.stop();
  await before.close();
  await after.close();
});

const answer = (value: unknown): HookReceiverMode => ({ kind: 'answer', answer: () => value });
const deep = (levels: number): unknown => (levels === 0 ? 'x' : { d: deep(levels - 1) });

/** Each failure, the hook's behaviour, and the code a fail-closed send gets. */
const FAILURES: Array<{ name: string; mode: HookReceiverMode | 'closed-port'; code: string }> = [
  { name: 'no answer within the timeout', mode: { kind: 'hang' }, code: 'OVERLOADED' },
  { name: 'nobody listening (a closed port)', mode: 'closed-port', code: 'OVERLOADED' },
  { name: 'HTTP 500', mode: { kind: 'status', status: 500 }, code: 'OVERLOADED' },
  {
    name: 'HTTP 403 with a deny-looking body',
    mode: { kind: 'answer', answer: () => ({ allow: false, reason: 'x' }), status: 403 },
    code: 'OVERLOADED',
  },
  { name: 'a 3xx redirect (never followed)', mode: { kind: 'status', status: 302 }, code: 'OVERLOADED' },
  { name: 'not JSON', mode: answer('<html>ok</html>'), code: 'INTERNAL' },
  { name: 'an empty answer', mode: answer(''), code: 'INTERNAL' },
  { name: 'a JSON array', mode: answer([{ allow: true }]), code: 'INTERNAL' },
  { name: '{"allow":"yes"}', mode: answer({ allow: 'yes' }), code: 'INTERNAL' },
  { name: 'a deny without a reason', mode: answer({ allow: false }), code: 'INTERNAL' },
  { name: 'a deny with a 1025-character reason', mode: answer({ allow: false, reason: 'r'.repeat(1025) }), code: 'INTERNAL' },
  { name: 'a rewrite over 64 KiB', mode: answer({ allow: true, body: { t: 'x'.repeat(70_000) } }), code: 'INTERNAL' },
  { name: 'a rewrite nested 100 deep', mode: answer({ allow: true, body: deep(100) }), code: 'INTERNAL' },
  { name: 'a rewrite with an unpaired surrogate', mode: answer('{"allow":true,"body":{"t":"\\ud800"}}'), code: 'INTERNAL' },
];

async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/hook`;
}

async function setTenant(patch: Record<string, unknown>): Promise<void> {
  await server.settings.update({ hooks: { tenant: 'default', patch } });
}

describe.each(['closed', 'open'] as const)('before-send failures, fail-%s', (failure) => {
  it.each(FAILURES)('$name', async ({ mode, code }) => {
    await setTenant({ beforeSendFailure: failure, beforeSendUrl: mode === 'closed-port' ? await closedPortUrl() : before.url });
    if (mode !== 'closed-port') before.setMode(mode);
    try {
      const { group, clients } = await groupMates(ctx, 3);
      const [alice, bob] = clients as [TestClient, TestClient];
      const heads = await Promise.all(clients.map(headOf));
      const sent = { t: 'as sent' };
      for (const to of [{ user: bob.user }, { group }]) {
        const app = appinfo();
        const r = await alice.call('send', { appinfo: app, to, type: 'text', body: sent });
        if (failure === 'closed') {
          expect(r).toMatchObject({ ok: false, error: { code } });
        } else {
          expect(r.ok).toBe(true);
          expect((r as unknown as { body?: unknown }).body).toBeUndefined();
          expect((await holds(alice, app))?.body).toEqual(sent);
        }
      }
      if (failure === 'closed') {
        await new Promise((res) => setTimeout(res, 200));
        expect(await Promise.all(clients.map(headOf))).toEqual(heads);
      }
    } finally {
      before.setMode(answer({ allow: true }));
      await setTenant({ beforeSendFailure: null, beforeSendUrl: null });
    }
  });
});

describe('before-send, hostile senders', () => {
  it('a client cannot skip the hook by reusing the appinfo of a message the hook denied', async () => {
    const { clients } = await groupMates(ctx);
    const [alice, bob] = clients as [TestClient, TestClient];
    before.setMode(answer({ allow: false, reason: 'denied' }));
    const app = appinfo();
    for (let i = 0; i < 3; i++) {
      expect(await alice.call('send', { appinfo: app, to: { user: bob.user }, type: 'text', body: {} })).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN' },
      });
    }
    expect(await holds(bob, app)).toBeUndefined();
    before.setMode(answer({ allow: true }));
  });

  it("another user's appinfo is not a resend: the hook is asked, and and the recipient keeps the owner's message", async () => {
    const { clients } = await groupMates(ctx, 3);
    const [alice, bob, carol] = clients as [TestClient, TestClient, TestClient];
    before.setMode(answer({ allow: true }));
    const app = appinfo();
    await alice.ok('send', { appinfo: app, to: { user: bob.user }, type: 'text', body: { mine: true } });
    // Carol reuses it: not in her inbox, so the hook is asked; then stored as hers (each inbox owns its appinfos).
    const r = await carol.call('send', { appinfo: app, to: { user: bob.user }, type: 'text', body: { forged: true } });
    expect(r.ok === false ? r.error.code : 'stored').toMatch(/FORBIDDEN|stored/);
    expect(callsFor(before, app)).toHaveLength(2);
    expect((await holds(bob, app))?.from).toBe(alice.user);
    before.setMode(answer({ allow: true }));
  });
});
