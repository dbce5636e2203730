/**
 * GroupStreamAppender contract: the single writer of read-fanout group streams, in process
 * (GroupStreamWriter) or behind NATS (RemoteGroupStreamWriter + shard owners). Pinned here, per
 * group: gseqs rise and the new outcomes' prevSeqs chain into exactly the stream a reader reads
 * back (no hole, whatever the concurrency); a resend — later, in the same call, or concurrent —
 * answers the original gseq and stores nothing; headSeq covers the appends started before it;
 * a new writer (restart, new owner) continues above the old one's gseqs and still dedups them.
 * Gaps between gseqs are allowed by the port, so nothing here asserts consecutive gseqs.
 */
import { describe, expect, it } from 'vitest';
import { groupKey } from '@seqline/core';
import type { Entry, GroupAppendOutcome, GroupKey, GroupStreamAppender, GroupStreamStore, NewEntry } from '@seqline/core';
import { uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';

/** The writer under test and a reader of what it stored. */
export interface GroupStreamAppenderRig {
  /** The current writer: a new one after `restart`. */
  readonly appender: GroupStreamAppender;
  readonly streams: GroupStreamStore;
  /**
   * Replaces the writer of every group by a new one on the same data, with a new epoch (a
   * process restart, or a new shard owner); resolves once the new one takes appends.
   */
  restart(): Promise<void>;
}

function groupEntry(group: GroupKey, appinfo: string): NewEntry {
  const id = group.slice(group.indexOf(':') + 1);
  return {
    kind: 'msg',
    appinfo,
    from: 'alice',
    sendTime: 1_700_000_000_000,
    type: 'text',
    body: { text: appinfo },
    conv: { type: 'group', id },
  };
}

async function readAll(streams: GroupStreamStore, group: GroupKey): Promise<Entry[]> {
  const out: Entry[] = [];
  for (;;) {
    const page = await streams.readAfter({ group, afterGseq: out.at(-1)?.seq ?? 0, limit: 500 });
    if (page.length === 0) return out;
    out.push(...page);
  }
}

/**
 * The stored stream and the new outcomes of every call are the same chain: each stored entry
 * was answered new exactly once, with the gseq before it as prevSeq (0 for the first).
 */
function expectChained(stored: Entry[], outcomes: GroupAppendOutcome[], after = 0): void {
  const fresh = outcomes.filter((o) => !o.duplicate);
  expect(fresh.map((o) => o.seq).sort((a, b) => a - b)).toEqual(stored.map((e) => e.seq));
  const prevOf = new Map(fresh.map((o) => [o.seq, o.prevSeq]));
  expect(stored.map((e) => prevOf.get(e.seq))).toEqual([after, ...stored.slice(0, -1).map((e) => e.seq)]);
  expect(stored.every((e, i) => i === 0 || e.seq > stored[i - 1]!.seq)).toBe(true);
}

export function groupStreamAppenderContract(name: string, open: StoreOpener<GroupStreamAppenderRig>): void {
  describe(`GroupStreamAppender contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const newGroup = (id = 'g'): GroupKey => groupKey(uniqueTenant(), id);
    const appinfos = async (group: GroupKey): Promise<string[]> => (await readAll(ctx.store.streams, group)).map((e) => e.appinfo);

    it('assigns rising gseqs whose prevSeqs chain from 0; headSeq is the last one', async () => {
      const g = newGroup();
      expect(await ctx.store.appender.headSeq(g)).toBe(0);
      expect(await ctx.store.appender.append({ group: g, entries: [] })).toEqual([]);
      const [a, b] = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'm1'), groupEntry(g, 'm2')] });
      expect(a).toEqual({ seq: expect.any(Number) as number, duplicate: false, prevSeq: 0 });
      expect(b).toEqual({ seq: expect.any(Number) as number, duplicate: false, prevSeq: a!.seq });
      expect(b!.seq).toBeGreaterThan(a!.seq);
      const [c] = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'm3')] });
      expect(c).toEqual({ seq: expect.any(Number) as number, duplicate: false, prevSeq: b!.seq });
      expect(c!.seq).toBeGreaterThan(b!.seq);
      const stored = await readAll(ctx.store.streams, g);
      expect(stored.map((e) => [e.appinfo, e.seq])).toEqual([
        ['m1', a!.seq],
        ['m2', b!.seq],
        ['m3', c!.seq],
      ]);
      expect(await ctx.store.appender.headSeq(g)).toBe(c!.seq);
    });

    it('answers a resend with the original gseq, duplicate and without prevSeq, also repeated within one call; stores nothing', async () => {
      const g = newGroup();
      const [x, again] = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'x'), groupEntry(g, 'x')] });
      expect(x!.duplicate).toBe(false);
      expect(again).toEqual({ seq: x!.seq, duplicate: true });
      const [y] = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'y')] });
      const mixed = await ctx.store.appender.append({
        group: g,
        entries: [groupEntry(g, 'y'), groupEntry(g, 'z'), groupEntry(g, 'z'), groupEntry(g, 'x')],
      });
      expect(mixed).toEqual([
        { seq: y!.seq, duplicate: true },
        { seq: expect.any(Number) as number, duplicate: false, prevSeq: y!.seq },
        { seq: mixed[1]!.seq, duplicate: true },
        { seq: x!.seq, duplicate: true },
      ]);
      expect(await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'x'), groupEntry(g, 'y')] })).toEqual([
        { seq: x!.seq, duplicate: true },
        { seq: y!.seq, duplicate: true },
      ]);
      expect(await appinfos(g)).toEqual(['x', 'y', 'z']);
      expect(await ctx.store.appender.headSeq(g)).toBe(mixed[1]!.seq);
    });

    it('concurrent calls carrying one appinfo store it once: one caller gets it new, every other its gseq as a duplicate', async () => {
      const g = newGroup();
      const calls = 24;
      const results = await Promise.all(
        Array.from({ length: calls }, (_, i) =>
          ctx.store.appender.append({
            group: g,
            entries: i % 2 === 0 ? [groupEntry(g, 'shared')] : [groupEntry(g, `own${i}`), groupEntry(g, 'shared')],
          }),
        ),
      );
      const shared = results.map((r) => r.at(-1)!);
      expect(shared.filter((o) => !o.duplicate)).toHaveLength(1);
      expect(new Set(shared.map((o) => o.seq)).size).toBe(1);
      const stored = await readAll(ctx.store.streams, g);
      expect(stored.filter((e) => e.appinfo === 'shared').map((e) => e.seq)).toEqual([shared[0]!.seq]);
      expect(stored).toHaveLength(1 + calls / 2);
      expectChained(stored, results.flat());
      // Once stored, concurrent resends (each repeating it within the call) are all duplicates.
      const resent = await Promise.all(
        Array.from({ length: 6 }, () =>
          ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'shared'), groupEntry(g, 'shared')] }),
        ),
      );
      expect(resent.flat()).toEqual(Array.from({ length: 12 }, () => ({ seq: shared[0]!.seq, duplicate: true })));
      expect(await readAll(ctx.store.streams, g)).toEqual(stored);
    });

    it('many concurrent callers on one group: every entry stored once, gseqs strictly rising, prevSeqs chaining without a hole', async () => {
      const g = newGroup();
      const callers = 8;
      const perCaller = 20;
      const byCaller = await Promise.all(
        Array.from({ length: callers }, async (_, c) => {
          const mine: GroupAppendOutcome[] = [];
          for (let i = 0; i < perCaller; i++) {
            // Every third call carries two entries: merged batches and single appends interleave.
            const entries = i % 3 === 0 ? [groupEntry(g, `c${c}-${i}a`), groupEntry(g, `c${c}-${i}b`)] : [groupEntry(g, `c${c}-${i}`)];
            mine.push(...(await ctx.store.appender.append({ group: g, entries })));
          }
          return mine;
        }),
      );
      for (const mine of byCaller) {
        expect(mine.every((o) => !o.duplicate)).toBe(true);
        // One caller's calls, one after another, are stored in its order.
        expect(mine.every((o, i) => i === 0 || o.seq > mine[i - 1]!.seq)).toBe(true);
      }
      const stored = await readAll(ctx.store.streams, g);
      const expected = byCaller.reduce((n, mine) => n + mine.length, 0);
      expect(stored).toHaveLength(expected);
      expect(new Set(stored.map((e) => e.appinfo)).size).toBe(expected);
      expectChained(stored, byCaller.flat());
      expect(await ctx.store.appender.headSeq(g)).toBe(stored.at(-1)!.seq);
    });

    it('headSeq asked while appends are under way is at least every gseq of the appends started before it', async () => {
      const g = newGroup();
      const appends = Array.from({ length: 30 }, (_, i) => ctx.store.appender.append({ group: g, entries: [groupEntry(g, `h${i}`)] }));
      const head = ctx.store.appender.headSeq(g);
      const later = ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'after-head')] });
      const outcomes = (await Promise.all(appends)).flat();
      expect(await head).toBeGreaterThanOrEqual(Math.max(...outcomes.map((o) => o.seq)));
      expect(await ctx.store.appender.headSeq(g)).toBe((await later)[0]!.seq);
      expectChained(await readAll(ctx.store.streams, g), [...outcomes, ...(await later)]);
    });

    it('groups are independent: own gseq chains, and one appinfo is new in each group', async () => {
      const tenant = uniqueTenant();
      const groups = [groupKey(tenant, 'one'), groupKey(tenant, 'two'), groupKey(tenant, 'three')];
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => {
          const g = groups[i % groups.length]!;
          return ctx.store.appender.append({ group: g, entries: [groupEntry(g, i < groups.length ? 'same-appinfo' : `m${i}`)] });
        }),
      );
      for (const [k, g] of groups.entries()) {
        const mine = results.filter((_, i) => i % groups.length === k).flat();
        expect(mine.every((o) => !o.duplicate)).toBe(true);
        const stored = await readAll(ctx.store.streams, g);
        expect(stored).toHaveLength(20);
        expect(stored[0]!.appinfo).toBe('same-appinfo');
        expect(stored.every((e) => e.conv.id === g.slice(g.indexOf(':') + 1))).toBe(true);
        expectChained(stored, mine);
      }
    });

    it('a new writer (restart, new owner) continues above the old gseqs and still dedups what the old one stored', async () => {
      const g = newGroup();
      const before = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'a'), groupEntry(g, 'b'), groupEntry(g, 'c')] });
      const last = before.at(-1)!.seq;
      await ctx.store.restart();
      expect(await ctx.store.appender.headSeq(g)).toBe(last);
      const after = await ctx.store.appender.append({ group: g, entries: [groupEntry(g, 'b'), groupEntry(g, 'd'), groupEntry(g, 'e')] });
      expect(after[0]).toEqual({ seq: before[1]!.seq, duplicate: true });
      expect(after[1]).toEqual({ seq: expect.any(Number) as number, duplicate: false, prevSeq: last });
      expect(after[1]!.seq).toBeGreaterThan(last);
      expect(after[2]).toEqual({ seq: expect.any(Number) as number, duplicate: false, prevSeq: after[1]!.seq });
      expect(after[2]!.seq).toBeGreaterThan(after[1]!.seq);
      const stored = await readAll(ctx.store.streams, g);
      expect(stored.map((e) => e.appinfo)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expectChained(stored, [...before, ...after]);
      expect(await ctx.store.appender.headSeq(g)).toBe(after[2]!.seq);
    });
  });
}
