/**
 * Property: random interleavings (fast-check scheduler reorders store and ceiling calls) of
 * appends, resends, injected store failures and restarts (graceful, or the old owner left
 * running as a zombie) keep every inbox's seqs strictly increasing, dedup consistent, and each
 * new epoch above everything an older one ever tried to write.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { dedupKeyOf, FencedError } from '@seqline/core';
import type {
  AppendOutcome,
  DedupKey,
  InboxEntryRef,
  InboxKey,
  InboxPageAfter,
  InboxPageBefore,
  NewEntry,
  StoredOutcome,
  TimelineAppend,
  TimelineStore,
  EntryReaders,
} from '@seqline/core';
import type { InboxOwner } from '../src/index.ts';
import { FakeCeilingStore, FakeTimelineStore, RecordingPushBus } from './fakes.ts';
import { inbox, msg, ownerOn } from './harness.ts';

type Action =
  | { t: 'append'; user: number; n: number; resend: boolean; settle: boolean }
  | { t: 'restart'; graceful: boolean }
  | { t: 'fail'; landed: boolean }
  | { t: 'step'; n: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('append' as const),
      user: fc.nat(1),
      n: fc.integer({ min: 1, max: 3 }),
      resend: fc.boolean(),
      settle: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), graceful: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('fail' as const), landed: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('step' as const), n: fc.integer({ min: 1, max: 4 }) }) },
);

/** Delegates to the shared store, remembering which seqs this owner generation tried to write. */
class TaggedTimeline implements TimelineStore {
  readonly attempted = new Map<string, number[]>();
  constructor(private readonly inner: FakeTimelineStore) {}
  append(input: TimelineAppend): Promise<StoredOutcome[]> {
    const { inbox, entries } = input;
    this.attempted.set(inbox, [...(this.attempted.get(inbox) ?? []), ...entries.map((e) => e.seq)]);
    return this.inner.append(input);
  }
  findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }) {
    return this.inner.findSeqs(input);
  }
  getEntry(input: InboxEntryRef) {
    return this.inner.getEntry(input);
  }
  readAfter(input: InboxPageAfter) {
    return this.inner.readAfter(input);
  }
  readBefore(input: InboxPageBefore) {
    return this.inner.readBefore(input);
  }
  headSeq(k: InboxKey) {
    return this.inner.headSeq(k);
  }
  addReaders(input: EntryReaders) {
    return this.inner.addReaders(input);
  }
  getReaders(input: InboxEntryRef) {
    return this.inner.getReaders(input);
  }
}

interface Call {
  gen: number;
  key: InboxKey;
  entries: NewEntry[];
  result?: AppendOutcome[];
  error?: unknown;
}

describe('InboxOwner under random interleavings', () => {
  it('keeps per-inbox seqs strictly increasing across appends, failures and restarts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(action, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 2, max: 12 }),
        async (s, actions, step) => {
          const store = new FakeTimelineStore();
          const ceilings = new FakeCeilingStore();
          const push = new RecordingPushBus();
          // 'before': nothing written; 'after': written, but the caller sees an error (a timeout).
          let failNext: 'before' | 'after' | undefined;
          store.beforeAppend = async () => {
            await s.schedule(Promise.resolve(), 'append');
            if (failNext === 'before') {
              failNext = undefined;
              throw new Error('injected');
            }
          };
          store.afterAppend = () => {
            if (failNext === 'after') {
              failNext = undefined;
              throw new Error('injected');
            }
          };
          ceilings.beforeRaise = () => s.schedule(Promise.resolve(), 'raise');
          const tagged: TaggedTimeline[] = [];
          const owners: InboxOwner[] = [];
          const newOwner = (): InboxOwner => {
            const timeline = new TaggedTimeline(store);
            tagged.push(timeline);
            const o = ownerOn({ timeline, ceilings, push, epoch: owners.length + 1, step, shardCount: 2 });
            owners.push(o);
            return o;
          };
          let owner = newOwner();
          let allGraceful = true;
          const calls: Call[] = [];
          const sent = new Map<string, NewEntry[]>();
          for (const a of actions) {
            if (a.t === 'append') {
              const key = inbox(`u${a.user}`);
              const history = sent.get(key) ?? [];
              const entries = Array.from({ length: a.n }, (_, i) =>
                a.resend && history.length > 0 ? history[(i * 7) % history.length]! : msg('x', `m${calls.length}-${i}`),
              );
              sent.set(key, [...history, ...entries]);
              const call: Call = { gen: owners.length, key, entries };
              calls.push(call);
              const settled = owner.append({ inbox: key, entries }).then(
                (r) => {
                  call.result = r;
                },
                (e: unknown) => {
                  call.error = e;
                },
              );
              if (a.settle) await s.waitFor(settled); // a caller that waits for its answer before going on
            } else if (a.t === 'restart') {
              if (a.graceful) await s.waitFor(owner.close());
              else allGraceful = false;
              owner = newOwner();
            } else if (a.t === 'fail') {
              failNext = a.landed ? 'after' : 'before';
            } else if (s.count() > 0) {
              await s.waitNext(Math.min(a.n, s.count()));
            }
          }
          await s.waitIdle();
          await Promise.all(owners.map((o) => s.waitFor(o.close())));

          for (const [key] of sent) {
            const stored = store.all(key);
            const seqs = stored.map((e) => e.seq);
            // Strictly increasing, each appinfo once.
            for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
            expect(new Set(stored.map((e) => e.appinfo)).size).toBe(stored.length);
            // Each generation's attempted seqs are above every older generation's.
            for (let g = 1; g < tagged.length; g++) {
              const older = tagged.slice(0, g).flatMap((t) => t.attempted.get(key) ?? []);
              const mine = tagged[g]!.attempted.get(key) ?? [];
              if (older.length > 0 && mine.length > 0) expect(Math.min(...mine)).toBeGreaterThan(Math.max(...older));
            }
          }
          const storedSeq = (key: string, entry: NewEntry): number | undefined => store.inboxes.get(key)?.index.get(dedupKeyOf(entry));
          for (const call of calls) {
            expect(call.result !== undefined || call.error !== undefined).toBe(true);
            if (call.result) {
              // Dedup is consistent: every caller gets the seq the store holds for its appinfo.
              call.result.forEach((o, i) => expect(o.seq).toBe(storedSeq(call.key, call.entries[i]!)));
            } else if (!(call.error instanceof FencedError)) {
              const message = (call.error as Error).message;
              const zombie = call.gen < owners.length && /not above head/.test(message);
              expect(message === 'injected' || zombie).toBe(true);
            }
          }
          // FIFO within one owner: fresh seqs of one inbox follow call order.
          for (let g = 1; g <= owners.length; g++) {
            for (const key of sent.keys()) {
              const fresh = calls
                .filter((c) => c.gen === g && c.key === key && c.result)
                .flatMap((c) => c.result!.filter((o) => !o.duplicate).map((o) => o.seq));
              for (let i = 1; i < fresh.length; i++) expect(fresh[i]).toBeGreaterThan(fresh[i - 1]!);
            }
          }
          // Without zombies, a push's prevSeq is exactly the stored entry before its first entry.
          if (allGraceful) {
            for (const p of push.published) {
              const stored = store.all(p.inbox).map((e) => e.seq);
              const first = p.entries[0]!.seq;
              expect(stored.filter((x) => x < first).at(-1) ?? 0).toBe(p.prevSeq);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
