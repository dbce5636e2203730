/**
 * The client SDK follows a group across tier switches on the real server: write-fanout
 * messages arrive as inbox `entries`, read-fanout ones as `groupMessages` (group.push while
 * connected, group.history after being away), and the app sees every message exactly once —
 * across the switch into read-fanout, a reconnect, and the switch back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryMaxSeqStore, SeqlineClient, type Entry } from '@seqline/client';
import { issueToken } from '@seqline/protocol';
import { appinfo, SECRET, startTestServer, TestClient, waitFor, type TestServer } from './harness.ts';
import { okRetrying } from './large-groups.support.ts';

let s: TestServer;
const closers: Array<() => void> = [];

beforeAll(async () => {
  s = await startTestServer();
  // 5 members make a group huge here; no hysteresis, so 4 is large again.
  await s.settings.update({ tiers: { smallBelow: 3, largeBelow: 5, hysteresis: 0 } });
});
afterAll(async () => {
  for (const c of closers) c();
  await s.stop();
});

/** An app on the SDK: records what it was given, acks group messages as it shows them. */
async function app(user: string, store: MemoryMaxSeqStore) {
  const client = new SeqlineClient({
    url: `ws://127.0.0.1:${s.port}`,
    token: () => issueToken({ secret: SECRET, user, ttlSeconds: 600 }),
    store,
  });
  closers.push(() => client.close());
  const shown: Array<{ via: 'inbox' | 'stream'; appinfo: string }> = [];
  const tierEntries: Entry[] = [];
  client.on('entries', (entries) => {
    for (const e of entries) {
      if (e.kind === 'msg') shown.push({ via: 'inbox', appinfo: e.appinfo });
      if (e.kind === 'group' && (e.body as { event?: string }).event === 'tier') tierEntries.push(e);
    }
  });
  client.on('groupMessages', async ({ group, messages }) => {
    for (const m of messages) if (m.kind === 'msg') shown.push({ via: 'stream', appinfo: m.appinfo });
    await client.groupAck(group, messages.at(-1)!.gseq);
  });
  await client.connect();
  return { client, shown, tierEntries };
}

describe('client SDK across tier switches', () => {
  it('delivers every message once, from the inbox or the group stream, across switches and a reconnect', async () => {
    const alice = await TestClient.connect(s.url, 'c-alice');
    closers.push(() => alice.close());
    const group = 'follow';
    const store = new MemoryMaxSeqStore();
    let bob = await app('c-bob', store);
    const sent: string[] = [];
    const say = async () => {
      const a = appinfo();
      await okRetrying(alice, 'send', { appinfo: a, to: { group }, type: 'text', body: {} });
      sent.push(a);
      return a;
    };

    expect(await alice.ok('group.create', { name: 'f', group, members: ['c-bob', 'c-carol'] })).toMatchObject({ tier: 'large' });
    await say();
    await say();
    await waitFor(() => bob.shown.length === 2, 5000, 'write-fanout messages');
    expect(bob.shown.every((m) => m.via === 'inbox')).toBe(true);

    expect(await alice.ok('group.add', { group, members: ['c-dave', 'c-erin'] })).toMatchObject({ tier: 'huge' });
    await waitFor(() => bob.tierEntries.length === 1, 5000, 'the switch entry');
    expect(bob.tierEntries[0]!.body).toMatchObject({ tier: 'huge', fanout: 'read', fromGseq: 0 });
    await say();
    await say();
    await waitFor(() => bob.shown.length === 4, 5000, 'read-fanout messages by push');
    expect(bob.shown.slice(2).every((m) => m.via === 'stream')).toBe(true);

    // Away while two more arrive; a new session catches up from the server cursor (acked).
    const firstApp = bob;
    bob.client.close();
    await say();
    await say();
    bob = await app('c-bob', store);
    await waitFor(() => bob.shown.length === 2, 5000, 'catch-up after reconnect');
    expect(bob.shown.map((m) => m.via)).toEqual(['stream', 'stream']);

    expect(await alice.ok('group.remove', { group, members: ['c-erin'] })).toMatchObject({ tier: 'large' });
    await waitFor(() => bob.tierEntries.length === 1, 5000, 'the switch-back entry');
    expect(bob.tierEntries[0]!.body).toMatchObject({ tier: 'large', fanout: 'write', upToGseq: expect.any(Number) });
    await say();
    await waitFor(() => bob.shown.length === 3, 5000, 'write-fanout again');
    await new Promise((r) => setTimeout(r, 200));

    const firstSession = sent.slice(0, 4);
    const secondSession = sent.slice(4);
    expect(firstApp.shown.map((m) => m.appinfo)).toEqual(firstSession);
    expect(bob.shown.map((m) => m.appinfo)).toEqual(secondSession);
    expect(bob.shown.at(-1)!.via).toBe('inbox');
    expect(new Set([...firstSession, ...secondSession]).size).toBe(7);
    expect(bob.client.groupPosition(group)).toBeGreaterThan(0);
  });
});
