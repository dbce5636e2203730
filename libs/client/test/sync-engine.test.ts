/**
 * SyncEngine alone, with fast-check's scheduler deciding the order in which server work
 * (appends, pushes, sync replies) completes: every interleaving of pushes with in-flight syncs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryMaxSeqStore, SeqlineClientError, SyncEngine, type Entry, type SyncResult } from '../src/index.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function entry(seq: number): Entry {
  return { seq, kind: 'msg', appinfo: `a${seq}`, conv: { type: 'user', id: 'bob' }, from: 'bob', sendTime: seq };
}

function page(inbox: Entry[], maxSeq: number, limit: number): SyncResult {
  const after = inbox.filter((e) => e.seq > maxSeq);
  return { entries: after.slice(0, limit), headSeq: inbox.at(-1)?.seq ?? 0, hasMore: after.length > limit, groups: [] };
}

type Step = { t: 'append'; n: number; gap: number; pushes: number; partial: boolean } | { t: 'sync' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    t: fc.constant('append' as const),
    n: fc.integer({ min: 1, max: 3 }),
    gap: fc.integer({ min: 1, max: 3 }),
    pushes: fc.integer({ min: 0, max: 2 }), // 0: skipped, 2: duplicated
    partial: fc.boolean(), // push only the tail: starts past what came before
  }),
  fc.constant({ t: 'sync' as const }),
);

describe('SyncEngine', () => {
  it('under any interleaving, delivers exactly the inbox, ascending, each once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(step, { maxLength: 25 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(5),
        async (s, steps, pageLimit, stored) => {
          const inbox: Entry[] = [];
          for (let seq = 1; seq <= stored; seq++) inbox.push(entry(seq));
          const delivered: Entry[] = [];
          const problems: string[] = [];
          const store = new MemoryMaxSeqStore(stored);
          const engine: SyncEngine = new SyncEngine({
            store,
            pageLimit,
            // The page is computed when the request reaches the server; its reply comes later.
            fetchPage: (maxSeq, limit) => s.schedule(Promise.resolve(page(inbox, maxSeq, limit)), `sync>${maxSeq}`),
            deliver: async (batch) => {
              delivered.push(...batch);
              const want = inbox
                .slice(stored, stored + delivered.length)
                .map((e) => e.seq)
                .join();
              if (delivered.map((e) => e.seq).join() !== want) problems.push(`delivered ${delivered.map((e) => e.seq)}`);
            },
            groups: async () => {},
            logger: silent,
          });
          const trigger = (): void => void engine.syncNow().catch((e: unknown) => problems.push(String(e)));
          for (const st of steps) {
            if (st.t === 'sync') {
              trigger();
              continue;
            }
            void s.schedule(Promise.resolve(), 'append').then(() => {
              const prevSeq = inbox.at(-1)?.seq ?? 0;
              let seq = prevSeq;
              const added: Entry[] = [];
              for (let i = 0; i < st.n; i++) added.push(entry((seq += st.gap)));
              inbox.push(...added);
              const pushed = st.partial && added.length > 1 ? added.slice(1) : added;
              const pushPrev = st.partial && added.length > 1 ? added[0]!.seq : prevSeq;
              for (let p = 0; p < st.pushes; p++) {
                void s
                  .schedule(Promise.resolve(), `push>${pushPrev}`)
                  .then(() => engine.handlePush(pushPrev, pushed))
                  .then((outcome) => (outcome === 'gap' || outcome === 'invalid') && trigger());
              }
            });
          }
          await s.waitAll();
          // Tasks can be scheduled after waitAll saw none (behind the engine's own queue):
          // waitFor keeps releasing until the catch-up sync is done.
          await s.waitFor(engine.syncNow());
          expect(problems).toEqual([]);
          expect(delivered.map((e) => e.seq)).toEqual(inbox.slice(stored).map((e) => e.seq));
          expect(await store.load()).toBe(inbox.at(-1)?.seq ?? 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('classifies pushes against max seq', async () => {
    const engine = new SyncEngine({
      store: new MemoryMaxSeqStore(10),
      pageLimit: 10,
      logger: silent,
      fetchPage: async () => ({ entries: [], headSeq: 10, hasMore: false, groups: [] }),
      deliver: async () => {},
      groups: async () => {},
    });
    expect(await engine.handlePush(10, [entry(11)])).toBe('applied');
    expect(await engine.handlePush(10, [entry(11)])).toBe('stale');
    expect(await engine.handlePush(9, [entry(10), entry(11), entry(13)])).toBe('applied');
    expect(engine.currentMaxSeq).toBe(13);
    expect(await engine.handlePush(14, [entry(15)])).toBe('gap');
    expect(await engine.handlePush(13, [entry(15), entry(14)])).toBe('invalid');
    expect(await engine.handlePush(13, [entry(13)])).toBe('invalid');
    expect(await engine.handlePush(13, [])).toBe('stale');
    expect(engine.currentMaxSeq).toBe(13);
  });

  it('rejects a sync page that does not ascend past max seq, and a hasMore page with nothing', async () => {
    const pages: SyncResult[] = [
      { entries: [entry(3), entry(2)], headSeq: 3, hasMore: false, groups: [] },
      { entries: [], headSeq: 3, hasMore: true, groups: [] },
    ];
    const delivered: number[] = [];
    const engine = new SyncEngine({
      store: new MemoryMaxSeqStore(1),
      pageLimit: 10,
      logger: silent,
      fetchPage: async () => pages.shift()!,
      deliver: async (b) => void delivered.push(...b.map((e) => e.seq)),
      groups: async () => {},
    });
    for (let i = 0; i < 2; i++) {
      const err = await engine.syncNow().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SeqlineClientError);
      expect((err as SeqlineClientError).code).toBe('PROTOCOL');
    }
    expect(delivered).toEqual([]);
    expect(engine.currentMaxSeq).toBe(1);
  });

  it('does not apply anything until the stored max seq is loaded, and retries a failed load', async () => {
    let failLoad = true;
    const delivered: number[] = [];
    const engine = new SyncEngine({
      store: {
        load: async () => {
          if (failLoad) throw new Error('disk unavailable');
          return 5;
        },
        save: async () => {},
      },
      pageLimit: 10,
      logger: silent,
      fetchPage: async () => ({ entries: [], headSeq: 5, hasMore: false, groups: [] }),
      deliver: async (b) => void delivered.push(...b.map((e) => e.seq)),
      groups: async () => {},
    });
    await expect(engine.handlePush(0, [entry(1)])).rejects.toThrow('disk unavailable');
    failLoad = false;
    expect(await engine.handlePush(0, [entry(1)])).toBe('stale');
    expect(await engine.handlePush(5, [entry(6)])).toBe('applied');
    expect(delivered).toEqual([6]);
  });
});
