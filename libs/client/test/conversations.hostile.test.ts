/**
 * A server (or a man in the middle) feeding the SDK bad conversation states: a malformed
 * `conversations` answer or sync page is a typed PROTOCOL error that moves neither max seq nor
 * the list; malformed states in a push are dropped while its entries still arrive; a replayed,
 * older state never replaces a newer one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SeqlineClientError, type Conversation, type SeqlineClient } from '../src/index.ts';
import { collect, testClient, waitFor } from './support/helpers.ts';
import { ScriptedServer } from './support/scripted-server.ts';

let server: ScriptedServer;
const clients: SeqlineClient[] = [];

const state = (asOfSeq: number, unread: number): Conversation => ({
  conv: { type: 'user', id: 'bob' },
  lastSeq: asOfSeq,
  last: null,
  readSeq: 0,
  unread,
  mentions: 0,
  clearedSeq: 0,
  asOfSeq,
});

async function connected(): Promise<SeqlineClient> {
  const c = testClient(server);
  clients.push(c);
  await c.connect();
  await c.syncNow();
  return c;
}

async function protocolError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SeqlineClientError);
  return (err as SeqlineClientError).code;
}

beforeEach(async () => {
  server = await ScriptedServer.start();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

describe('bad conversation states from the server', () => {
  it('a malformed `conversations` answer is PROTOCOL: no jump of max seq, nothing listed', async () => {
    const c = await connected();
    for (const convs of [
      [{ ...state(5, 1), unread: -1 }],
      [{ ...state(5, 1), asOfSeq: undefined }],
      [{ ...state(5, 1), conv: { type: 'x', id: 'b' } }],
      'nope',
    ]) {
      server.misbehave.set('conversations', { reply: { ok: true, convs, headSeq: 900, hasMore: false } });
      expect(await protocolError(c.loadConversations({ limit: 10 }))).toBe('PROTOCOL');
    }
    server.misbehave.set('conversations', { reply: { ok: true, convs: [state(5, 1)], headSeq: -3, hasMore: false } });
    expect(await protocolError(c.loadConversations({ limit: 10 }))).toBe('PROTOCOL');
    expect(c.maxSeq).toBe(0);
    expect(c.conversations()).toEqual([]);
  });

  it('a sync page with malformed states is PROTOCOL: its entries are not delivered, max seq stays', async () => {
    server.append(3);
    server.misbehave.set('sync', {
      reply: { ok: true, entries: server.inbox, headSeq: 3, hasMore: false, groups: [], convs: [{ conv: 1 }] },
    });
    const c = testClient(server);
    clients.push(c);
    const got = collect(c);
    await c.connect();
    expect(await protocolError(c.syncNow())).toBe('PROTOCOL');
    expect(got.seqs()).toEqual([]);
    expect(c.maxSeq).toBe(0);
  });

  it('malformed states in a push are dropped; its entries still arrive', async () => {
    const c = await connected();
    const got = collect(c);
    const { prevSeq, entries } = server.append(1);
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq, entries, convs: [{ ...state(1, 1), mentions: 'many' }] }));
    await waitFor(() => c.maxSeq === 1, 'push applied');
    expect(got.seqs()).toEqual([1]);
    expect(c.conversations()).toEqual([]);
  });

  it('a replayed older state does not replace a newer one, and fires no event', async () => {
    const c = await connected();
    const events: Conversation[][] = [];
    c.on('conversations', (l) => void events.push(l));
    const first = server.append(1);
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq: first.prevSeq, entries: first.entries, convs: [state(1, 1)] }));
    const second = server.append(1);
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq: second.prevSeq, entries: second.entries, convs: [state(2, 0)] }));
    await waitFor(() => c.conversations()[0]?.asOfSeq === 2, 'newer state held');
    // The first push again, then a stale page answer carrying the old state.
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq: first.prevSeq, entries: first.entries, convs: [state(1, 1)] }));
    server.misbehave.set('conversations', { reply: { ok: true, convs: [state(1, 1)], headSeq: 2, hasMore: false } });
    await c.loadConversations({ beforeLastSeq: 9 });
    expect(c.conversations()).toMatchObject([{ asOfSeq: 2, unread: 0 }]);
    expect(events.map((l) => l.map((s) => s.asOfSeq))).toEqual([[1], [2]]);
  });
});
