/**
 * The embedded server's memory bounds at /metrics: every SEQLINE_MAX_* setting of its config
 * schema is reported as `seqline_bound_limit{bound}` with its configured value and as
 * `seqline_bound_fill{bound}`; and the offline notifier at SEQLINE_MAX_NOTIFY_ITEMS (a
 * 60-second window, a bound of 3 items, 5 offline users): the oldest windows notify at once,
 * fill never passes 3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxBoundNames } from '@seqline/runtime/bounds';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { envSchema } from '../src/config.ts';
import { appinfo, startTestServer, TestClient, type TestServer } from './harness.ts';

const HOOK_SECRET = 'bounds-hook-secret-0123';
const NOTIFY_ITEMS = 3;
const OFFLINE_USERS = ['bd-u0', 'bd-u1', 'bd-u2', 'bd-u3', 'bd-u4'];
const names = maxBoundNames(envSchema);
/** Each bound a value of its own, so a gauge reporting another bound's value fails. */
const env: Record<string, string> = Object.fromEntries(names.map((name, i) => [name, String(1000 + i)]));
env.SEQLINE_MAX_NOTIFY_ITEMS = String(NOTIFY_ITEMS);

let receiver: HookReceiver;
let s: TestServer;
let alice: TestClient | undefined;

beforeAll(async () => {
  receiver = await startHookReceiver({ secret: HOOK_SECRET });
  s = await startTestServer({
    ...env,
    SEQLINE_HOOK_SECRET: HOOK_SECRET,
    SEQLINE_NOTIFY_URL: receiver.url,
    SEQLINE_NOTIFY_WINDOW_MS: '60000',
  });
});
afterAll(async () => {
  alice?.close();
  await s.stop();
  await receiver.close();
});

const metrics = async () => (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text();
const fillOf = (text: string, name: string) => Number(new RegExp(`^seqline_bound_fill\\{bound="${name}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
const notifiedUsers = () => receiver.accepted().map((c) => (c.json as { user: string }).user);

describe('embedded server bounds at /metrics', () => {
  it('reports every SEQLINE_MAX_* setting of the config schema with its value, and its fill', async () => {
    expect(names).toEqual(expect.arrayContaining(['SEQLINE_MAX_SEQ_KEYS', 'SEQLINE_MAX_CACHED_INBOXES', 'SEQLINE_MAX_NOTIFY_ITEMS']));
    const text = await metrics();
    for (const name of names) {
      expect(text, name).toMatch(new RegExp(`^seqline_bound_limit\\{bound="${name}"\\} ${env[name]}$`, 'm'));
      expect(fillOf(text, name), name).toBeGreaterThanOrEqual(0);
    }
  });

  it('at SEQLINE_MAX_NOTIFY_ITEMS the oldest windows notify at once and the fill stays at the bound', async () => {
    alice = await TestClient.connect(s.url, 'bd-alice');
    for (const user of OFFLINE_USERS) {
      await alice.ok('send', { appinfo: appinfo(), to: { user }, type: 'text', body: { text: `hi ${user}` } });
      expect(fillOf(await metrics(), 'SEQLINE_MAX_NOTIFY_ITEMS')).toBeLessThanOrEqual(NOTIFY_ITEMS);
    }
    // Five windows of one item each under a bound of 3: the two oldest closed early, long before
    // their 60-second window, and their notifications came.
    const calls = await receiver.waitForAccepted(2);
    expect(notifiedUsers()).toEqual(['bd-u0', 'bd-u1']);
    expect(calls.map((c) => c.json)).toEqual([
      expect.objectContaining({ type: 'notify', user: 'bd-u0', badge: 1, entries: [expect.objectContaining({ from: 'bd-alice' })] }),
      expect.objectContaining({ type: 'notify', user: 'bd-u1', badge: 1, entries: [expect.objectContaining({ from: 'bd-alice' })] }),
    ]);
    const text = await metrics();
    expect(fillOf(text, 'SEQLINE_MAX_NOTIFY_ITEMS')).toBe(NOTIFY_ITEMS);
    // The allocators hold the inboxes just written (and the cache their heads): fills that move.
    expect(fillOf(text, 'SEQLINE_MAX_SEQ_KEYS')).toBeGreaterThan(0);
    expect(fillOf(text, 'SEQLINE_MAX_CACHED_INBOXES')).toBeGreaterThan(0);
  });
});
