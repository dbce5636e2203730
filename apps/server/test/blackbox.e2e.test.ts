/**
 * Black box: `npm start` as a user runs it (built JS, the README's command), spoken to only
 * over the wire — WebSocket frames and HTTP — as a client app and an attacker would. Tokens are
 * minted with the shared secret, as an app's own auth service would mint them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { startHookReceiver, type HookReceiver, type ReceivedHookCall } from '@seqline/testing';
import { freePort } from './child-server.ts';
import { appinfo, SECRET, TestClient, waitFor } from './harness.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let server: ChildProcess;
let dataDir: string;
let port: number;
let output = '';
const open: TestClient[] = [];
/** The app's services, as real HTTP receivers that check every signature (v1.1 hooks). */
const HOOK_SECRET = 'blackbox-hook-secret-0123';
let notify: HookReceiver;
let beforeSend: HookReceiver;
let afterSend: HookReceiver;

// Each run is a fresh `npm start`: one thread (today's process), then two, where the users'
// inboxes spread over both owner threads and their sockets over both gateways.
describe.each([{ threads: 1 }, { threads: 2 }])('npm start with $threads thread(s)', ({ threads }) => {
  beforeAll(async () => {
    output = '';
    open.length = 0;
    dataDir = await mkdtemp(join(tmpdir(), 'seqline-blackbox-'));
    port = await freePort();
    notify = await startHookReceiver({ secret: HOOK_SECRET });
    afterSend = await startHookReceiver({ secret: HOOK_SECRET });
    beforeSend = await startHookReceiver({ secret: HOOK_SECRET, mode: { kind: 'answer', answer: decideSend } });
    const hooks = {
      SEQLINE_HOOK_SECRET: HOOK_SECRET,
      SEQLINE_NOTIFY_URL: notify.url,
      SEQLINE_NOTIFY_WINDOW_MS: '1000',
      SEQLINE_BEFORE_SEND_URL: beforeSend.url,
      SEQLINE_AFTER_SEND_URL: afterSend.url,
      SEQLINE_LOGIN_POLICY: 'one-per-platform',
    };
    server = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        SEQLINE_DATA_DIR: dataDir,
        SEQLINE_SECRET: SECRET,
        LOG_LEVEL: 'info',
        SEQLINE_THREADS: String(threads),
        ...hooks,
      },
    });
    server.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    server.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    // npm start builds first (prestart), which takes a while on a cold tree.
    await waitFor(
      async () =>
        (await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )) || undefined,
      170_000,
      `npm start to answer /healthz\n${output}`,
    );
  }, 180_000);

  afterAll(async () => {
    for (const c of open) c.close();
    // npm runs node in its own process group (detached above): signal the group, as a terminal would.
    if (server.pid !== undefined) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    await new Promise((resolve) => {
      if (server.exitCode !== null) resolve(null);
      else server.once('exit', resolve);
    });
    await rm(dataDir, { recursive: true, force: true });
    await Promise.all([notify, beforeSend, afterSend].map((r) => r.close()));
  }, 60_000);

  /** The app's before-send policy: one word is refused, one body is rewritten, the rest allowed. */
  function decideSend(call: ReceivedHookCall): unknown {
    const text = (call.json as { body?: { text?: unknown } } | undefined)?.body?.text;
    if (text === 'forbidden word') return { allow: false, reason: 'no such words here' };
    if (text === 'rewrite me') return { allow: true, body: { text: 'rewritten by the app' } };
    return { allow: true };
  }

  function callsFor(receiver: HookReceiver, key: 'user' | 'from', id: string): ReceivedHookCall[] {
    return receiver.accepted().filter((c) => (c.json as Record<string, unknown>)[key] === id);
  }

  async function connect(user: string): Promise<TestClient> {
    const c = await TestClient.connect(`ws://127.0.0.1:${port}/v1/ws`, user);
    open.push(c);
    return c;
  }

  describe('npm start, from outside', () => {
    it('logs which transport it chose, for this Node', async () => {
      // The logger writes asynchronously: the line may reach the pipe after /healthz answered.
      const chosen = /gateway transport: (native uWebSockets\.js|ws package)/;
      await waitFor(() => chosen.test(output), 10_000, `the transport log line\n${output}`);
      expect(output).toMatch(chosen);
    });

    it('two users chat: a push arrives, a late sync by max seq gets the rest, a resend keeps one copy', async () => {
      const [alice, bob] = [await connect('bb-alice'), await connect('bb-bob')];
      const first = appinfo();
      await alice.ok('send', { appinfo: first, to: { user: bob.user }, type: 'text', body: { text: 'hi' } });
      await waitFor(() => bob.pushes.find((p) => p.entries.some((e) => e.appinfo === first)), 10_000, 'the push');
      // Over HTTP too, with the same token rules.
      const token = await issueToken({ secret: SECRET, user: alice.user, tenant: 'default', ttlSeconds: 60 });
      const second = appinfo();
      const sent = await fetch(`http://127.0.0.1:${port}/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ appinfo: second, to: { user: bob.user }, type: 'text', body: { text: 'again' } }),
      });
      expect(sent.status).toBe(200);
      const again = await alice.ok<{ duplicate: boolean }>('send', {
        appinfo: second,
        to: { user: bob.user },
        type: 'text',
        body: { text: 'again' },
      });
      expect(again.duplicate).toBe(true);
      const inbox = await waitFor(async () => {
        const all = await bob.syncAll();
        return all.length >= 2 ? all : undefined;
      });
      expect(inbox.map((e) => e.appinfo)).toEqual([first, second]);
    });

    it("an attacker's replayed appinfo is only their own message; a forged server id, a bad token, two credentials are refused", async () => {
      const [alice, mallory, carol] = [await connect('bb-alice2'), await connect('bb-mallory'), await connect('bb-carol')];
      const x = appinfo();
      await alice.ok('send', { appinfo: x, to: { user: mallory.user }, type: 'text', body: { text: 'private' } });
      await waitFor(async () => (await mallory.syncAll()).some((e) => e.appinfo === x));
      // A received appinfo sent on is a message of mallory's own (appinfos are unique per sender), never alice's.
      expect(await mallory.call('send', { appinfo: x, to: { user: carol.user }, type: 'text', body: {} })).toMatchObject({
        ok: true,
        duplicate: false,
      });
      expect(await mallory.call('send', { appinfo: `recall:${x}`, to: { user: carol.user }, type: 'text', body: {} })).toMatchObject({
        ok: false,
        error: { code: 'BAD_REQUEST' },
      });
      const carols = await waitFor(async () => {
        const all = await carol.syncAll();
        return all.length > 0 ? all : undefined;
      });
      expect(carols.map((e) => [e.from, e.appinfo, e.body])).toEqual([[mallory.user, x, {}]]);
      const status = async (headers: Record<string, string>) =>
        (await fetch(`http://127.0.0.1:${port}/v1/sync?maxSeq=0`, { headers })).status;
      expect(await status({ authorization: 'Bearer not-a-token' })).toBe(401);
      const token = await issueToken({ secret: SECRET, user: carol.user, tenant: 'default', ttlSeconds: 60 });
      expect(await status({ authorization: `Bearer ${token}` })).toBe(200);
      expect(await status({ authorization: `Bearer ${token}, Bearer ${token}` })).toBe(401);
    });

    it('HEAD /healthz answers without a body', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    });
  });

  describe('hooks and devices, from outside (v1.1)', () => {
    it('the app decides each send; an offline user is notified once per window; every stored message is reported', async () => {
      const alice = await connect('bbh-alice');
      const text = (t: string) => ({ to: { user: 'bbh-bob' }, appinfo: appinfo(), type: 'text', body: { text: t } });
      const allowed = [text('one'), text('two'), text('three')];
      for (const send of allowed) await alice.ok('send', send);
      const denied = await alice.call('send', text('forbidden word'));
      expect(denied).toMatchObject({ ok: false, error: { code: 'FORBIDDEN', message: 'no such words here' } });
      // Once per window: the three sends, then the denied one added nothing, the rewrite opens a new window.
      const [first] = await waitFor(() => callsFor(notify, 'user', 'bbh-bob').length > 0 && callsFor(notify, 'user', 'bbh-bob'));
      await new Promise((r) => setTimeout(r, 1200));
      expect(callsFor(notify, 'user', 'bbh-bob')).toHaveLength(1);
      expect(first?.json).toMatchObject({ type: 'notify', user: 'bbh-bob', badge: 3 });
      expect((first?.json as { entries: unknown[] }).entries.map((e) => (e as { appinfo: string }).appinfo)).toEqual(
        allowed.map((a) => a.appinfo),
      );

      const rewrite = text('rewrite me');
      expect(await alice.ok('send', rewrite)).toMatchObject({ body: { text: 'rewritten by the app' } });
      await waitFor(() => callsFor(notify, 'user', 'bbh-bob').length === 2 || undefined);
      expect(callsFor(notify, 'user', 'bbh-bob')[1]?.json).toMatchObject({ badge: 4 });

      // What bob finds is what the app allowed, as it allowed it; the app heard of exactly that.
      const bob = await connect('bbh-bob');
      const bodies = (await bob.syncAll()).filter((e) => e.kind === 'msg').map((e) => e.body);
      expect(bodies).toEqual([{ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'rewritten by the app' }]);
      await waitFor(() => callsFor(afterSend, 'from', 'bbh-alice').length >= 4 || undefined);
      const reported = new Set(callsFor(afterSend, 'from', 'bbh-alice').map((c) => (c.json as { appinfo: string }).appinfo));
      expect(reported).toEqual(new Set([...allowed, rewrite].map((a) => a.appinfo)));
      // Every call was signed: nothing arrived that the receivers had to refuse.
      expect([notify, beforeSend, afterSend].flatMap((r) => r.calls).filter((c) => !c.verdict.ok)).toEqual([]);
    });

    it('a second ios login signs the first out (kicked, 4409); a web login does not', async () => {
      const url = (dev: string, plat: string) => `ws://127.0.0.1:${port}/v1/ws?dev=${dev}&plat=${plat}`;
      const phone1 = await TestClient.connect(url('phone-1', 'ios'), 'bbh-carol');
      const closed = new Promise<number>((resolve) => phone1.ws.once('close', (code) => resolve(code)));
      // The first login is served before the second starts: two logins that overlap are the
      // device bus contract's race case ("exactly one stays"), not this one.
      await phone1.ok('sync', { maxSeq: 0 });
      const phone2 = await TestClient.connect(url('phone-2', 'ios'), 'bbh-carol');
      open.push(phone1, phone2);
      await phone2.ok('sync', { maxSeq: 0 });
      expect(await closed).toBe(4409);
      expect(phone1.unmatched).toContainEqual({ op: 'kicked', by: { dev: 'phone-2', plat: 'ios' } });
      const laptop = await TestClient.connect(url('laptop', 'web'), 'bbh-carol');
      open.push(laptop);
      await laptop.ok('sync', { maxSeq: 0 });
      await phone2.ok('sync', { maxSeq: 0 }); // still served
    });
  });
});
