import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WsWebSocket from 'ws';
import { SeqlineClient, SeqlineClientError, type Entry, type WebSocketConstructor } from '../src/index.ts';
import { collect, testClient, waitFor } from './support/helpers.ts';
import { ScriptedServer } from './support/scripted-server.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: ScriptedServer;
let client: SeqlineClient;

beforeEach(async () => {
  server = await ScriptedServer.start();
});

afterEach(async () => {
  client?.close();
  await server.close();
});

async function rejection(p: Promise<unknown>): Promise<SeqlineClientError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SeqlineClientError);
  return err as SeqlineClientError;
}

describe('edit', () => {
  it('carries a UUIDv7 editId and resends a lost reply with the same one: one edit stored', async () => {
    client = testClient(server);
    await client.connect();
    server.misbehave.set('edit', { dropReplies: 1 });
    const out = await client.edit('m1', { text: 'fixed' });
    const attempts = server.requestsOf('edit').map((r) => r['editId']);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatch(UUID_V7);
    expect(attempts[1]).toBe(attempts[0]);
    expect(server.inbox.filter((e) => e.appinfo === `edit:alice:${String(attempts[0])}`)).toHaveLength(1);
    expect(out.seq).toBe(server.inbox[0]!.seq);
  });

  it('takes the editId given (to resume an edit after a crash) and sends a new one per edit', async () => {
    client = testClient(server);
    await client.connect();
    await client.edit('m1', { text: 'a' }, undefined, 'edit-1');
    await client.edit('m1', { text: 'b' }, 'note');
    const sent = server.requestsOf('edit');
    expect(sent.map((r) => r['editId'])).toEqual(['edit-1', expect.stringMatching(UUID_V7)]);
    expect(sent[1]).toMatchObject({ appinfo: 'm1', body: { text: 'b' }, type: 'note' });
  });
});

describe('send', () => {
  it('generates a UUIDv7 appinfo and returns the stored seq', async () => {
    client = testClient(server);
    await client.connect();
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: { text: 'hi' } });
    expect(out.appinfo).toMatch(UUID_V7);
    expect(out.duplicate).toBe(false);
    expect(server.inbox.map((e) => [e.seq, e.appinfo])).toEqual([[out.seq, out.appinfo]]);
  });

  it('resends a lost reply with the same appinfo; the server dedups it (exactly once)', async () => {
    client = testClient(server);
    await client.connect();
    server.misbehave.set('send', { dropReplies: 1 });
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: 'x' });
    const attempts = server.requestsOf('send').map((r) => r['appinfo']);
    expect(attempts).toEqual([out.appinfo, out.appinfo]);
    expect(out.duplicate).toBe(true);
    expect(server.inbox.filter((e) => e.appinfo === out.appinfo)).toHaveLength(1);
    expect(out.seq).toBe(server.inbox[0]!.seq);
  });

  it('resends after the connection drops mid-request, on the new connection', async () => {
    client = testClient(server);
    await client.connect();
    server.misbehave.set('send', { closeAfterApply: 1 });
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: 'x', appinfo: 'my-id-1' });
    expect(out).toMatchObject({ appinfo: 'my-id-1', duplicate: true });
    expect(server.requestsOf('send').map((r) => r['appinfo'])).toEqual(['my-id-1', 'my-id-1']);
    expect(server.connections).toBe(2);
    expect(server.inbox).toHaveLength(1);
  });

  it('gives up after maxResends unanswered attempts, always with the same appinfo', async () => {
    client = testClient(server, { maxResends: 2, requestTimeoutMs: 100, silentTimeoutsBeforeReconnect: 100 });
    await client.connect();
    server.misbehave.set('send', { hang: true });
    const err = await rejection(client.send({ to: { user: 'bob' }, type: 'text', body: 1 }));
    expect(err.code).toBe('TIMEOUT');
    const attempts = server.requestsOf('send').map((r) => r['appinfo']);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts).size).toBe(1);
  });

  it('drops a silent connection after consecutive timeouts and resends on a fresh one', async () => {
    client = testClient(server, { requestTimeoutMs: 100, silentTimeoutsBeforeReconnect: 2, maxResends: 3 });
    await client.connect();
    await client.syncNow();
    server.autoPush = false; // a push is a sign of life: it would (rightly) keep the socket
    server.misbehave.set('send', { dropReplies: 2 });
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: 1 });
    expect(out.duplicate).toBe(true);
    expect(server.connections).toBe(2);
    expect(new Set(server.requestsOf('send').map((r) => r['appinfo'])).size).toBe(1);
  });

  it('does not resend on a typed error', async () => {
    client = testClient(server);
    await client.connect();
    server.misbehave.set('send', { fail: { code: 'FORBIDDEN', count: 1 } });
    const err = await rejection(client.send({ to: { group: 'g1' }, type: 'text', body: 1 }));
    expect(err.code).toBe('FORBIDDEN');
    expect(err.message).toBe('scripted');
    expect(server.requestsOf('send')).toHaveLength(1);
  });

  it.each(['OVERLOADED', 'RATE_LIMITED'])('backs off and retries on %s', async (code) => {
    client = testClient(server);
    await client.connect();
    server.misbehave.set('send', { fail: { code, count: 2 } });
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: 1 });
    expect(out.duplicate).toBe(false);
    expect(server.requestsOf('send')).toHaveLength(3);
  });

  it('rejects with the server code when busy outlasts maxResends', async () => {
    client = testClient(server, { maxResends: 1 });
    await client.connect();
    server.misbehave.set('send', { fail: { code: 'OVERLOADED', count: 5 } });
    expect((await rejection(client.send({ to: { user: 'bob' }, type: 't', body: 1 }))).code).toBe('OVERLOADED');
    expect(server.requestsOf('send')).toHaveLength(2);
  });

  it('its own message comes back through push exactly once', async () => {
    client = testClient(server);
    const got = collect(client);
    await client.connect();
    await client.syncNow();
    server.misbehave.set('send', { dropReplies: 1 });
    const out = await client.send({ to: { user: 'bob' }, type: 'text', body: 'x' });
    await waitFor(() => got.seqs().includes(out.seq), 'own entry');
    expect(got.batches.flat().filter((e: Entry) => e.appinfo === out.appinfo)).toHaveLength(1);
  });
});

describe('lifecycle', () => {
  it('close() rejects pending requests with CLOSED and never reconnects', async () => {
    client = testClient(server, { requestTimeoutMs: 5000 });
    const states: string[] = [];
    client.on('state', (s) => void states.push(s));
    await client.connect();
    server.misbehave.set('send', { hang: true });
    const pending = client.send({ to: { user: 'bob' }, type: 't', body: 1 });
    await waitFor(() => server.requestsOf('send').length === 1, 'send reached the server');
    client.close();
    expect((await rejection(pending)).code).toBe('CLOSED');
    await new Promise((r) => setTimeout(r, 100));
    expect(server.connections).toBe(1);
    expect(states).toContain('closed');
    expect((await rejection(client.connect())).code).toBe('CLOSED');
  });

  it('keeps retrying a refused upgrade (401) and connects once the token is good', async () => {
    let calls = 0;
    // The `ws` constructor: it reports the 401 itself, which a global (browser-style) WebSocket hides.
    client = testClient(server, {
      WebSocket: WsWebSocket as unknown as WebSocketConstructor,
      token: async () => (++calls < 3 ? 'expired' : 'good-token'),
    });
    await client.connect();
    expect(server.rejectedUpgrades).toBe(2);
    expect(calls).toBe(3);
    expect(client.connected).toBe(true);
  });

  it('sends the token as a query parameter when asked (browser mode)', async () => {
    client = testClient(server, { tokenTransport: 'query' });
    await client.connect();
    expect(server.rejectedUpgrades).toBe(0);
  });

  it('a request made while disconnected waits for the connection', async () => {
    client = testClient(server, { requestTimeoutMs: 2000, reconnectBackoff: { initialMs: 100, maxMs: 100 } });
    await client.connect();
    server.kick();
    await waitFor(() => !client.connected, 'disconnect');
    const info = await client.groupInfo('g');
    expect(info.fanout).toBe('write');
    expect(server.connections).toBe(2);
  });

  it('a typed error reply rejects with its code; a reply without the op shape is PROTOCOL', async () => {
    client = testClient(server);
    await client.connect();
    expect((await rejection(client.requestRaw('no.such.op', {}))).code).toBe('BAD_REQUEST');
    server.misbehave.set('sync', { reply: { ok: true, entries: [{ seq: 'one' }], headSeq: 1, hasMore: false } });
    expect((await rejection(client.sync(0))).code).toBe('PROTOCOL');
    server.misbehave.set('sync', { reply: { ok: true, entries: [], headSeq: 0, hasMore: false } });
    expect(await client.sync(0)).toMatchObject({ entries: [], groups: [] });
  });

  it('names the group `group` on the wire, so it never collides with the frame id', async () => {
    client = testClient(server);
    await client.connect();
    expect(await client.createGroup({ name: 'team', members: ['bob'], group: 'team-1' })).toEqual({ group: 'team-1', tier: 'small' });
    expect(await client.addMembers('team-1', ['carol'])).toEqual({ tier: 'small', memberCount: 2 });
    expect(await client.removeMembers('team-1', ['carol'])).toEqual({ tier: 'small', memberCount: 2 });
    expect(await client.groupInfo('team-1')).toMatchObject({ group: 'team-1', fanout: 'write' });
    expect(await client.groupHistory({ group: 'team-1', afterGseq: 0 })).toEqual({ messages: [], hasMore: false });
    expect(await client.groupAck('team-1', 7)).toEqual({ cursor: 7 });
    const groupFrames = server.requests.filter((r) => r.op.startsWith('group.'));
    expect(groupFrames.every((r) => r['group'] === 'team-1' && typeof r.id === 'number')).toBe(true);
    expect((await rejection(client.requestRaw('x', { id: 'oops' }))).code).toBe('BAD_REQUEST');
  });
});
