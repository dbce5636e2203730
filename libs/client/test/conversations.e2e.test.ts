/**
 * The SDK's conversation features against a real embedded server (LMDB, real sockets): two
 * devices of one user agree on unread after a read, a delete or clear on one hides the entries
 * on the other, edits and mentions reach the list, and a fresh device bootstraps from
 * `conversations` without replaying the inbox from seq 0.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WsWebSocket from 'ws';
import { silentLogger } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '@seqline/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SeqlineClient, type Conv, type Conversation, type Entry, type HiddenEntries } from '../src/index.ts';
import { waitFor } from './support/helpers.ts';

const SECRET = 'conversations-e2e-secret-0123456789';
let tmp: string;
let server: RunningServer;
const clients: SeqlineClient[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'seqline-client-convs-'));
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: join(tmp, 'data'),
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  });
  server = await startEmbeddedServer(config, silentLogger);
}, 60_000);

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await server?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** One device of `user`, recording what the SDK hands the app. */
function device(user: string) {
  const client = new SeqlineClient({
    url: `ws://127.0.0.1:${server.port}`,
    token: () => issueToken({ secret: SECRET, user, ttlSeconds: 600 }),
    WebSocket: WsWebSocket,
    requestTimeoutMs: 10_000,
  });
  clients.push(client);
  const seen = { entries: [] as Entry[], hidden: [] as HiddenEntries[], edited: [] as string[], syncFroms: [] as number[] };
  client.on('entries', (es) => void seen.entries.push(...es));
  client.on('hidden', (h) => void seen.hidden.push(h));
  client.on('edited', (e) => void seen.edited.push(e.edit.appinfo));
  const conv = (c: Conv): Conversation | undefined => client.conversations().find((x) => x.conv.type === c.type && x.conv.id === c.id);
  return { client, seen, conv };
}

/** Distinct users per test: the server keeps its inboxes across tests. */
let n = 0;
const users = () => {
  n += 1;
  return { alice: `alice${n}`, bob: `bob${n}`, carol: `carol${n}` };
};

describe('conversations through the SDK, on a real embedded server', () => {
  it('a read on one device moves the other device to the same unread count after its next sync', async () => {
    const u = users();
    const bob = device(u.bob);
    const [a1, a2] = [device(u.alice), device(u.alice)];
    await Promise.all([bob.client.connect(), a1.client.connect(), a2.client.connect()]);
    const withBob: Conv = { type: 'user', id: u.bob };
    for (let i = 0; i < 4; i++) await bob.client.send({ to: { user: u.alice }, type: 'text', body: { text: `hi ${i}` } });
    await waitFor(() => a1.conv(withBob)?.unread === 4 && a2.conv(withBob)?.unread === 4, 'both devices count 4 unread');

    await a1.client.markRead(withBob);
    await a2.client.syncNow();
    await waitFor(() => a1.conv(withBob)?.unread === 0, 'the reading device counts 0');
    expect(a2.conv(withBob)).toMatchObject({ unread: 0, readSeq: a1.conv(withBob)?.readSeq });
    // And both equal what the server says now.
    const fresh = await a2.client.request('conversations', { limit: 10 });
    expect(fresh.convs.find((c) => c.conv.id === u.bob)).toMatchObject({ unread: 0, readSeq: a2.conv(withBob)?.readSeq });

    await bob.client.send({ to: { user: u.alice }, type: 'text', body: { text: 'one more' } });
    await waitFor(() => a1.conv(withBob)?.unread === 1 && a2.conv(withBob)?.unread === 1, 'a new message counts on both');
  });

  it('delete-for-me and clear on one device hide the entries on the other; edits and mentions reach the list', async () => {
    const u = users();
    const bob = device(u.bob);
    const [a1, a2] = [device(u.alice), device(u.alice)];
    await Promise.all([bob.client.connect(), a1.client.connect(), a2.client.connect()]);
    const withBob: Conv = { type: 'user', id: u.bob };
    const first = await bob.client.send({ to: { user: u.alice }, type: 'text', body: { text: 'first' } });
    await bob.client.send({ to: { user: u.alice }, type: 'text', body: { text: 'second' } });
    await waitFor(() => a2.conv(withBob)?.unread === 2, 'two unread on the second device');
    const second = a2.conv(withBob)?.last;
    expect(second?.body).toEqual({ text: 'second' });

    await a1.client.deleteForMe([second!.seq]);
    await waitFor(() => a2.seen.hidden.some((h) => h.by === 'delete' && h.seqs.includes(second!.seq)), 'hidden event on device 2');
    await waitFor(() => a2.conv(withBob)?.unread === 1, 'the deleted message no longer counts');
    expect(a2.conv(withBob)?.last?.body).toEqual({ text: 'first' });
    const history = await a2.client.history(withBob, { limit: 50 });
    expect(history.entries.map((e) => e.seq)).not.toContain(second!.seq);

    await bob.client.edit(first.appinfo, { text: 'first, edited' });
    await waitFor(() => a2.seen.edited.includes(first.appinfo), 'edited event on device 2');
    await waitFor(() => JSON.stringify(a2.conv(withBob)?.last?.body) === JSON.stringify({ text: 'first, edited' }), 'edited last');

    await a1.client.clear(withBob);
    await waitFor(() => a2.seen.hidden.some((h) => h.by === 'clear' && h.conv.id === u.bob), 'clear reaches device 2');
    await waitFor(() => a2.conv(withBob)?.last === null && a2.conv(withBob)?.unread === 0, 'cleared: nothing visible, nothing unread');

    const { group } = await bob.client.createGroup({ name: 'team', members: [u.alice, u.carol] });
    await bob.client.send({ to: { group }, type: 'text', body: { text: '@alice look' }, mentions: [u.alice] });
    await bob.client.send({ to: { group }, type: 'text', body: { text: 'no mention' } });
    await waitFor(() => a2.conv({ type: 'group', id: group })?.unread === 2, 'group unread on device 2');
    expect(a2.conv({ type: 'group', id: group })?.mentions).toBe(1);
    expect(a2.client.conversations()[0]?.conv.id).toBe(group); // newest activity first
  });

  it("group conversations carry the group's name as `title`; renameGroup moves every member's title, 1:1 chats have none", async () => {
    const u = users();
    const [alice, bob] = [device(u.alice), device(u.bob)];
    await Promise.all([alice.client.connect(), bob.client.connect()]);
    const { group } = await alice.client.createGroup({ name: 'team', members: [u.bob] });
    const conv: Conv = { type: 'group', id: group };
    await waitFor(() => bob.conv(conv)?.title === 'team', "bob's list names the group");
    await alice.client.send({ to: { user: u.bob }, type: 'text', body: { text: 'hi' } });
    await waitFor(() => bob.conv({ type: 'user', id: u.alice }) !== undefined, 'the 1:1 chat is listed');
    expect(bob.conv({ type: 'user', id: u.alice })?.title).toBeUndefined();

    const renamed = await alice.client.renameGroup(group, 'crew');
    expect(renamed).toEqual({ group, name: 'crew' });
    await waitFor(() => bob.conv(conv)?.title === 'crew' && alice.conv(conv)?.title === 'crew', 'both lists follow the rename');
    const title: string | undefined = bob.conv(conv)?.title; // typed on Conversation
    expect(title).toBe('crew');
    // Only the admin renames: a typed error, nothing changes.
    await expect(bob.client.renameGroup(group, 'mine')).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await bob.client.groupInfo(group)).name).toBe('crew');
  });

  it('a fresh device bootstraps from `conversations` and does not replay the inbox from seq 0', async () => {
    const u = users();
    const bob = device(u.bob);
    const carol = device(u.carol);
    await Promise.all([bob.client.connect(), carol.client.connect()]);
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 150; i++) {
      const from = i % 3 === 0 ? carol : bob;
      sends.push(from.client.send({ to: { user: u.alice }, type: 'text', body: { text: `m${i}` } }));
    }
    await Promise.all(sends);

    // The old way, for comparison: a device with no max seq replays every entry.
    const replaying = device(u.alice);
    let t = performance.now();
    await replaying.client.connect();
    await waitFor(() => replaying.seen.entries.length >= 150, 'the replaying device gets the inbox');
    const replayMs = performance.now() - t;

    const fresh = device(u.alice);
    t = performance.now();
    const boot = fresh.client.loadConversations({ limit: 50, lastMessages: 5 }); // before connect: the first sync waits
    await fresh.client.connect();
    const listed = await boot;
    await fresh.client.syncNow();
    const bootMs = performance.now() - t;
    expect(fresh.client.conversations().map((c) => c.conv.id)).toEqual([u.bob, u.carol]); // bob's is the newest
    expect(listed.convs.map((c) => c.conv.id).sort()).toEqual([u.bob, u.carol].sort()); // each conversation once
    expect(listed.convs.every((c) => c.messages?.length === 5)).toBe(true);
    expect(fresh.conv({ type: 'user', id: u.bob })?.unread).toBe(100);
    expect(fresh.conv({ type: 'user', id: u.carol })?.unread).toBe(50);
    expect(fresh.client.maxSeq).toBe(listed.headSeq);
    expect(fresh.seen.entries).toEqual([]); // nothing replayed
    console.info(
      `[measure] fresh device: replay ${replaying.seen.entries.length} entries in ${replayMs.toFixed(0)} ms; bootstrap 0 entries, ${listed.convs.length} convs in ${bootMs.toFixed(0)} ms`,
    );

    // Sync goes on from headSeq: what comes next arrives, and the server's counts follow.
    const next = await bob.client.send({ to: { user: u.alice }, type: 'text', body: { text: 'after bootstrap' } });
    await waitFor(() => fresh.seen.entries.some((e) => e.seq > listed.headSeq), 'the next message arrives');
    expect(fresh.seen.entries.filter((e) => e.kind === 'msg').map((e) => e.appinfo)).toEqual([next.appinfo]);
    await waitFor(() => fresh.conv({ type: 'user', id: u.bob })?.unread === 101, 'unread follows the server');
  });
});
