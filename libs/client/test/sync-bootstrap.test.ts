/**
 * The fresh-device bootstrap in the SyncEngine: a summary exact at headSeq stands for the inbox
 * up to there, so sync goes on from headSeq instead of 0; rounds started meanwhile wait; a page
 * already in flight loses nothing past headSeq; max seq never moves back.
 */
import { describe, expect, it } from 'vitest';
import { MemoryMaxSeqStore, SyncEngine, type Entry, type SyncResult } from '../src/index.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const entry = (seq: number): Entry => ({
  seq,
  kind: 'msg',
  appinfo: `a${seq}`,
  conv: { type: 'user', id: 'bob' },
  from: 'bob',
  sendTime: seq,
});
const inbox = Array.from({ length: 30 }, (_, i) => entry(i + 1));

function page(maxSeq: number, limit: number): SyncResult {
  const after = inbox.filter((e) => e.seq > maxSeq);
  return { entries: after.slice(0, limit), headSeq: 30, hasMore: after.length > limit, groups: [] };
}

function rig(stored = 0, fetchPage: (maxSeq: number, limit: number) => Promise<SyncResult> = async (m, l) => page(m, l)) {
  const delivered: number[] = [];
  const froms: number[] = [];
  const store = new MemoryMaxSeqStore(stored);
  const engine = new SyncEngine({
    store,
    pageLimit: 5,
    logger: silent,
    fetchPage: (maxSeq, limit) => {
      froms.push(maxSeq);
      return fetchPage(maxSeq, limit);
    },
    deliver: async (b) => void delivered.push(...b.map((e) => e.seq)),
    groups: async () => {},
  });
  return { engine, delivered, froms, store };
}

describe('SyncEngine bootstrap', () => {
  it('jumps to headSeq before the first round: the inbox is not replayed from 0', async () => {
    const { engine, delivered, froms, store } = rig();
    const boot = engine.bootstrap(async () => ({ headSeq: 27 }));
    const synced = engine.syncNow(); // as on connect: starts while the bootstrap runs, waits for it
    expect(await boot).toEqual({ headSeq: 27 });
    await synced;
    expect(froms).toEqual([27]);
    expect(delivered).toEqual([28, 29, 30]);
    expect(await store.load()).toBe(30);
  });

  it('a page in flight from 0 when the jump lands delivers only what is past headSeq, and nothing is lost', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const { engine, delivered, froms } = rig(0, async (m, l) => {
      if (m === 0) await held; // the first page is answered only after the bootstrap
      return page(m, l);
    });
    const synced = engine.syncNow();
    await new Promise((r) => setTimeout(r, 0));
    await engine.bootstrap(async () => ({ headSeq: 3 }));
    release();
    await synced;
    expect(froms).toEqual([0, 5, 10, 15, 20, 25]);
    expect(delivered).toEqual(inbox.slice(3).map((e) => e.seq));
  });

  it('never moves max seq back, and a failed bootstrap leaves it and lets sync run', async () => {
    const { engine, delivered, froms } = rig(20);
    await engine.bootstrap(async () => ({ headSeq: 12 }));
    expect(engine.currentMaxSeq).toBe(20);
    await expect(engine.bootstrap(() => Promise.reject(new Error('offline')))).rejects.toThrow('offline');
    await engine.syncNow();
    expect(froms).toEqual([20, 25]);
    expect(delivered).toEqual(inbox.slice(20).map((e) => e.seq));
  });
});
