/**
 * The send hooks end to end (issue #27, parts 2 and 3), written once and run against the
 * embedded server (send-hooks.test.ts) and the distributed stack (apps/worker/test): a real
 * before-send receiver that allows, rewrites, denies or stalls; the `shared-group` send policy;
 * and a real after-send receiver checking every call's signature.
 *
 * Both modes start with the same hook settings (HOOK_ENV): signed, before-send fail-closed
 * with a 2 s timeout, after-send on, `sendPolicy: shared-group`.
 */
import type { HookReceiver, ReceivedHookCall } from '@seqline/testing';
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type TestClient, type WireEntry } from './harness.ts';

export const HOOK_SECRET = 'send-hooks-secret-0123456789';
export const BEFORE_SEND_TIMEOUT_MS = 2_000;

/** The environment both modes start with (the receivers' URLs added). */
export function hookEnv(before: HookReceiver, after: HookReceiver): Record<string, string> {
  return {
    SEQLINE_HOOK_SECRET: HOOK_SECRET,
    SEQLINE_BEFORE_SEND_URL: before.url,
    SEQLINE_BEFORE_SEND_TIMEOUT_MS: String(BEFORE_SEND_TIMEOUT_MS),
    SEQLINE_BEFORE_SEND_FAILURE: 'closed',
    SEQLINE_AFTER_SEND_URL: after.url,
    SEQLINE_SEND_POLICY: 'shared-group',
  };
}

export interface SendHookContext {
  connect(user: string): Promise<TestClient>;
  /** A user or group id unique to this run. */
  id(prefix: string): string;
  before: HookReceiver;
  after: HookReceiver;
}

interface SendReply {
  seq: number;
  sendTime: number;
  duplicate: boolean;
  body?: unknown;
}

const ALLOW = { kind: 'answer', answer: () => ({ allow: true }) } as const;

function field(call: ReceivedHookCall, name: string): unknown {
  const json = call.json;
  return typeof json === 'object' && json !== null ? (json as Record<string, unknown>)[name] : undefined;
}

export function callsFor(receiver: HookReceiver, app: string): ReceivedHookCall[] {
  return receiver.calls.filter((c) => field(c, 'appinfo') === app);
}

/** Waits until the after-send receiver accepted a call for `app`; returns them all. */
export async function afterSendOf(receiver: HookReceiver, app: string, timeoutMs = 15_000): Promise<ReceivedHookCall[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const accepted = receiver.accepted().filter((c) => field(c, 'appinfo') === app);
    if (accepted.length > 0) return accepted;
    if (Date.now() > deadline) throw new Error(`no after-send call for ${app} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function headOf(c: TestClient): Promise<number> {
  return (await c.ok<{ headSeq: number }>('sync', { maxSeq: 0, limit: 1 })).headSeq;
}

export async function holds(c: TestClient, app: string): Promise<WireEntry | undefined> {
  return (await c.syncAll()).find((e) => e.appinfo === app);
}

/** Two users who share a group (the policy lets them talk), connected. */
export async function groupMates(ctx: SendHookContext, size = 2): Promise<{ group: string; clients: TestClient[] }> {
  const users = Array.from({ length: size }, (_, i) => ctx.id(`u${i}`));
  const clients = await Promise.all(users.map((u) => ctx.connect(u)));
  const group = ctx.id('g');
  await clients[0]!.ok('group.create', { name: 'mates', group, members: users.slice(1) });
  // Every member has the group's event before a test reads its inbox head.
  for (const c of clients) await waitFor(async () => (await headOf(c)) > 0, 10_000, `${c.user} got the group event`);
  return { group, clients };
}

export function describeSendHooks(mode: string, context: () => SendHookContext): void {
  describe(`send hooks (${mode})`, () => {
    it('an allowed 1:1 send: one signed before-send call, stored in both inboxes, one signed after-send call', async () => {
      const ctx = context();
      ctx.before.setMode(ALLOW);
      const { clients } = await groupMates(ctx);
      const [alice, bob] = clients as [TestClient, TestClient];
      const app = appinfo();
      const r = await alice.ok<SendReply>('send', { appinfo: app, to: { user: bob.user }, type: 'text', body: { t: 'hi' } });
      expect(r.body).toBeUndefined();
      const [call] = callsFor(ctx.before, app);
      expect(call?.verdict).toEqual({ ok: true });
      expect(call?.json).toMatchObject({
        type: 'before_send',
        from: alice.user,
        to: { user: bob.user },
        appinfo: app,
        msgType: 'text',
        body: { t: 'hi' },
      });
      expect((await holds(bob, app))?.body).toEqual({ t: 'hi' });
      const after = await afterSendOf(ctx.after, app);
      expect(after).toHaveLength(1);
      expect(after[0]!.json).toMatchObject({
        type: 'after_send',
        from: alice.user,
        to: { user: bob.user },
        seq: r.seq,
        sendTime: r.sendTime,
        msgType: 'text',
        body: { t: 'hi' },
      });
    });

    it('shared-group: strangers are refused, group mates allowed, a removed member refused; nothing stored, no hook called', async () => {
      const ctx = context();
      ctx.before.setMode(ALLOW);
      const { group, clients } = await groupMates(ctx, 3);
      const [alice, bob, carol] = clients as [TestClient, TestClient, TestClient];
      const stranger = await ctx.connect(ctx.id('stranger'));
      const refused = appinfo();
      const head = await headOf(stranger);
      const r = await alice.call('send', { appinfo: refused, to: { user: stranger.user }, type: 'text', body: {} });
      expect(r).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      expect((await stranger.call('send', { appinfo: appinfo(), to: { user: alice.user }, type: 'text', body: {} })).ok).toBe(false);
      expect(await headOf(stranger)).toBe(head);
      expect(await holds(alice, refused)).toBeUndefined();
      expect(callsFor(ctx.before, refused)).toHaveLength(0);
      await alice.ok('send', { appinfo: appinfo(), to: { user: carol.user }, type: 'text', body: {} });
      await alice.ok('group.remove', { group, members: [carol.user] });
      const afterRemoval = await bob.call('send', { appinfo: appinfo(), to: { user: carol.user }, type: 'text', body: {} });
      expect(afterRemoval).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      await bob.ok('send', { appinfo: appinfo(), to: { user: alice.user }, type: 'text', body: {} });
    });

    it('a deny answers FORBIDDEN with its reason and stores nothing anywhere (1:1 and group)', async () => {
      const ctx = context();
      const { group, clients } = await groupMates(ctx, 3);
      const [alice, bob, carol] = clients as [TestClient, TestClient, TestClient];
      const heads = await Promise.all(clients.map(headOf));
      ctx.before.setMode({ kind: 'answer', answer: () => ({ allow: false, reason: 'contains a banned word' }) });
      const direct = appinfo();
      const toGroup = appinfo();
      expect(await alice.call('send', { appinfo: direct, to: { user: bob.user }, type: 'text', body: { t: 'bad' } })).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN', message: 'contains a banned word' },
      });
      expect(await carol.call('send', { appinfo: toGroup, to: { group }, type: 'text', body: { t: 'bad' } })).toMatchObject({
        ok: false,
        error: { code: 'FORBIDDEN', message: 'contains a banned word' },
      });
      // Anything written would show by now: a group message's fanout job runs within a few ms.
      await new Promise((r) => setTimeout(r, 300));
      expect(await Promise.all(clients.map(headOf))).toEqual(heads);
      expect(callsFor(ctx.after, direct).length + callsFor(ctx.after, toGroup).length).toBe(0);
      // A resend of a denied message asks again (nothing was stored): now allowed, stored once.
      ctx.before.setMode(ALLOW);
      await alice.ok('send', { appinfo: direct, to: { user: bob.user }, type: 'text', body: { t: 'bad' } });
      expect(callsFor(ctx.before, direct)).toHaveLength(2);
    });

    it('a rewrite is what is stored, pushed, sent after-send and returned to the sender', async () => {
      const ctx = context();
      const { group, clients } = await groupMates(ctx, 3);
      const [alice, bob, carol] = clients as [TestClient, TestClient, TestClient];
      ctx.before.setMode({
        kind: 'answer',
        answer: (call) => ({ allow: true, body: { t: `[checked] ${String((field(call, 'body') as { t: string }).t)}` } }),
      });
      for (const to of [{ user: bob.user }, { group }]) {
        const app = appinfo();
        const r = await alice.ok<SendReply>('send', { appinfo: app, to, type: 'text', body: { t: 'raw' } });
        expect(r.body).toEqual({ t: '[checked] raw' });
        expect((await holds(alice, app))?.body).toEqual({ t: '[checked] raw' });
        const after = await afterSendOf(ctx.after, app);
        expect(after[0]!.json).toMatchObject({ seq: r.seq, body: { t: '[checked] raw' } });
        if ('group' in to) {
          const deadline = Date.now() + 10_000;
          while (!(await holds(carol, app)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
          expect((await holds(carol, app))?.body).toEqual({ t: '[checked] raw' });
        } else expect((await holds(bob, app))?.body).toEqual({ t: '[checked] raw' });
        // The resend is answered with what is stored, without asking the hook again.
        const again = await alice.ok<SendReply>('send', { appinfo: app, to, type: 'text', body: { t: 'raw' } });
        expect(again).toMatchObject({ seq: r.seq, duplicate: true, body: { t: '[checked] raw' } });
        expect(callsFor(ctx.before, app)).toHaveLength(1);
      }
    });

    it('a resend of a stored message calls the hook once in total; after-send stays keyed by appinfo', async () => {
      const ctx = context();
      ctx.before.setMode(ALLOW);
      const { group, clients } = await groupMates(ctx);
      const [alice, bob] = clients as [TestClient, TestClient];
      for (const to of [{ user: bob.user }, { group }]) {
        const app = appinfo();
        const first = await alice.ok<SendReply>('send', { appinfo: app, to, type: 'text', body: { n: 1 } });
        for (let i = 0; i < 3; i++) {
          const again = await alice.ok<SendReply>('send', { appinfo: app, to, type: 'text', body: { n: 1 } });
          expect(again).toMatchObject({ seq: first.seq, duplicate: true });
          expect(again.body).toBeUndefined();
        }
        expect(callsFor(ctx.before, app)).toHaveLength(1);
        const after = await afterSendOf(ctx.after, app);
        expect(after.every((c) => field(c, 'seq') === first.seq)).toBe(true);
      }
    });

    it('no answer within the timeout, fail-closed: OVERLOADED, nothing stored', async () => {
      const ctx = context();
      const { clients } = await groupMates(ctx);
      const [alice, bob] = clients as [TestClient, TestClient];
      const heads = await Promise.all(clients.map(headOf));
      ctx.before.setMode({ kind: 'hang' });
      const app = appinfo();
      const started = Date.now();
      const r = await alice.call('send', { appinfo: app, to: { user: bob.user }, type: 'text', body: {} });
      expect(r).toMatchObject({ ok: false, error: { code: 'OVERLOADED', message: 'before-send hook unavailable' } });
      expect(Date.now() - started).toBeLessThan(BEFORE_SEND_TIMEOUT_MS + 2_000);
      expect(await Promise.all(clients.map(headOf))).toEqual(heads);
      ctx.before.setMode(ALLOW);
    });

    it("a slow hook does not hold the socket's other requests: a sync answers while the send waits", async () => {
      const ctx = context();
      const { clients } = await groupMates(ctx);
      const [alice, bob] = clients as [TestClient, TestClient];
      ctx.before.setMode({ kind: 'answer', answer: () => ({ allow: true }), delayMs: 1_000 });
      const slow = alice.call('send', { appinfo: appinfo(), to: { user: bob.user }, type: 'text', body: {} });
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      await alice.ok('sync', { maxSeq: 0, limit: 10 });
      const syncMs = Date.now() - started;
      expect((await slow).ok).toBe(true);
      console.log(`${mode}: sync during a 1 s before-send call answered in ${syncMs} ms`);
      expect(syncMs).toBeLessThan(200);
      ctx.before.setMode(ALLOW);
    });
  });
}
