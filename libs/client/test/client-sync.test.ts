import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileMaxSeqStore, MemoryMaxSeqStore, SeqlineClient, type GroupNews } from '../src/node.ts';
import { collect, testClient, waitFor } from './support/helpers.ts';
import { ScriptedServer } from './support/scripted-server.ts';

/** Records every save, so tests see when max seq was persisted. */
class RecordingStore extends MemoryMaxSeqStore {
  readonly saves: number[] = [];
  override async save(seq: number): Promise<void> {
    this.saves.push(seq);
    await super.save(seq);
  }
}

let server: ScriptedServer;
const clients: SeqlineClient[] = [];

function client(opts: Parameters<typeof testClient>[1] = {}): SeqlineClient {
  const c = testClient(server, opts);
  clients.push(c);
  return c;
}

function syncedOnce(c: SeqlineClient): Promise<void> {
  return new Promise((resolve) => {
    const off = c.on('synced', () => {
      off();
      resolve();
    });
  });
}

const syncFroms = (): number[] => server.requestsOf('sync').map((r) => Number(r['maxSeq']));

beforeEach(async () => {
  server = await ScriptedServer.start();
  server.seqStep = () => 1 + Math.floor(Math.random() * 3); // seqs with gaps, as I1 allows
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

describe('sync by max seq', () => {
  it('pages the whole inbox on connect, saving max seq after each page', async () => {
    const inbox = server.append(25).entries.map((e) => e.seq);
    const store = new RecordingStore();
    const c = client({ store, syncPageLimit: 10 });
    const got = collect(c);
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    expect(got.seqs()).toEqual(inbox);
    expect(got.batches.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(syncFroms()).toEqual([0, inbox[9], inbox[19]]);
    expect(store.saves).toEqual([inbox[9], inbox[19], inbox[24]]);
    expect(c.maxSeq).toBe(server.headSeq);
  });

  it('coalesces concurrent sync triggers into one extra round', async () => {
    const c = client();
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    const before = server.requestsOf('sync').length;
    server.syncDelayMs = () => 20;
    // Triggers before a round has sent its request are all covered by that round.
    await Promise.all(Array.from({ length: 10 }, () => c.syncNow()));
    expect(server.requestsOf('sync').length - before).toBe(1);
    // Triggers while a round is in flight join it, and cause exactly one more round.
    const first = c.syncNow();
    await waitFor(() => server.requestsOf('sync').length - before === 2, 'round in flight');
    const joined = Array.from({ length: 10 }, () => c.syncNow());
    expect(joined.every((p) => p === first)).toBe(true);
    await Promise.all(joined);
    expect(server.requestsOf('sync').length - before).toBe(3);
  });

  it('applies a push whose prevSeq is max seq, without syncing', async () => {
    const c = client();
    const got = collect(c);
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    const syncs = server.requestsOf('sync').length;
    const { prevSeq, entries } = server.append(3);
    server.push(prevSeq, entries);
    await waitFor(() => c.maxSeq === server.headSeq, 'push applied');
    expect(got.seqs()).toEqual(entries.map((e) => e.seq));
    server.push(prevSeq, entries); // duplicate push: already seen, ignored
    server.push(entries[0]!.seq, entries.slice(1)); // overlapping tail: already seen
    await c.syncNow();
    expect(got.seqs()).toEqual(entries.map((e) => e.seq));
    expect(server.requestsOf('sync').length).toBe(syncs + 1); // only the explicit syncNow
  });

  it('syncs when a push leaves a gap, and delivers the missing entries first', async () => {
    const c = client();
    const got = collect(c);
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    const skipped = server.append(2).entries; // never pushed
    const { prevSeq, entries } = server.append(1);
    server.push(prevSeq, entries);
    await waitFor(() => c.maxSeq === server.headSeq, 'gap filled by sync');
    expect(got.seqs()).toEqual([...skipped, ...entries].map((e) => e.seq));
    expect(syncFroms().at(-1)).toBe(0);
  });

  it('ignores frames that are not protocol and keeps working', async () => {
    const c = client();
    const got = collect(c);
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    server.broadcastRaw('not json');
    server.broadcastRaw('[1,2]');
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq: 0, entries: [{ seq: -1 }] }));
    server.broadcastRaw(JSON.stringify({ op: 'push', prevSeq: 'x', entries: [] }));
    const { prevSeq, entries } = server.append(1);
    server.push(prevSeq, entries);
    await waitFor(() => c.maxSeq === server.headSeq, 'valid push after garbage');
    expect(got.seqs()).toEqual(entries.map((e) => e.seq));
  });

  it('emits read-fanout groups with news', async () => {
    server.groups = [{ id: 'town-hall', headGseq: 9, cursor: 4 }];
    const c = client();
    const seen: GroupNews[][] = [];
    c.on('groups', (g) => void seen.push(g));
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    expect(seen).toEqual([[{ id: 'town-hall', headGseq: 9, cursor: 4 }]]);
  });

  it('awaits async entry listeners before saving max seq; a throwing listener does not stop delivery', async () => {
    server.append(4);
    const store = new RecordingStore();
    const c = client({ store, syncPageLimit: 2 });
    const log: string[] = [];
    c.on('entries', async (es) => {
      await new Promise((r) => setTimeout(r, 5));
      log.push(`stored ${es.at(-1)!.seq} (saved ${store.saves.at(-1) ?? 0})`);
    });
    c.on('entries', () => {
      throw new Error('app bug');
    });
    const synced = syncedOnce(c);
    await c.connect();
    await synced;
    const [a, b] = [server.inbox[1]!.seq, server.inbox[3]!.seq];
    expect(log).toEqual([`stored ${a} (saved 0)`, `stored ${b} (saved ${a})`]);
    expect(store.saves).toEqual([a, b]);
  });
});

describe('reconnect and restart', () => {
  it('reconnects after a drop and syncs from the saved max seq', async () => {
    server.append(5);
    const store = new RecordingStore();
    const c = client({ store });
    const got = collect(c);
    let synced = syncedOnce(c);
    await c.connect();
    await synced;
    const saved = store.saves.at(-1);
    expect(saved).toBe(server.headSeq);
    synced = syncedOnce(c);
    server.kick();
    const missed = server.append(3).entries; // written while the client is away, never pushed
    await synced;
    expect(server.connections).toBe(2);
    expect(syncFroms().at(-1)).toBe(saved);
    expect(got.seqs()).toEqual(server.inbox.map((e) => e.seq));
    expect(got.batches.at(-1)).toEqual(missed);
  });

  it('FileMaxSeqStore carries max seq across a client restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seqline-client-'));
    try {
      const path = join(dir, 'alice', 'maxseq.json');
      server.append(7);
      const first = client({ store: new FileMaxSeqStore(path) });
      let synced = syncedOnce(first);
      await first.connect();
      await synced;
      first.close();
      const head = server.headSeq;
      const later = server.append(2).entries;

      const second = client({ store: new FileMaxSeqStore(path) });
      const got = collect(second);
      synced = syncedOnce(second);
      await second.connect();
      await synced;
      expect(syncFroms().at(-1)).toBe(head);
      expect(got.seqs()).toEqual(later.map((e) => e.seq));
      expect(await new FileMaxSeqStore(path).load()).toBe(server.headSeq);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
