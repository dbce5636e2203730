/**
 * Test doubles of the ports, for unit tests of libs/seq only (the product adapters live in
 * libs/store). Each records what the tests need to check ordering and durability.
 */
import { dedupKeyOf, FencedError } from '@seqline/core';
import type {
  CeilingClaim,
  CeilingRaise,
  DedupKey,
  DrawnEpoch,
  Entry,
  InboxEntryRef,
  InboxPageAfter,
  InboxPageBefore,
  InboxKey,
  Logger,
  PushBus,
  PushMessage,
  SeqCeilingStore,
  StoredOutcome,
  TimelineAppend,
  TimelineStore,
  EntryReaders,
  PushToEach,
} from '@seqline/core';

export type CeilingEvent =
  { op: 'claim'; section: string; epoch: number; ceiling: number } | { op: 'raise'; section: string; epoch: number; ceiling: number };

/** Ceiling store double: state changes when a call resolves (= durable); optional gates. */
export class FakeCeilingStore implements SeqCeilingStore {
  readonly sections = new Map<string, { ceiling: number; epoch: number }>();
  /** Durable changes, in the order they became durable. */
  readonly events: CeilingEvent[] = [];
  raiseCalls = 0;
  /** Awaited before a raise is applied: lets a test delay or order raises. */
  beforeRaise: ((section: string, ceiling: number) => Promise<void>) | undefined;
  /** Thrown (once) by the next raise. */
  failNextRaise: Error | undefined;
  private readonly epochs = new Map<string, number>();
  private readonly releases = new Map<string, { epoch: number; atMs: number }>();

  durableCeiling(section: string): number {
    return this.sections.get(section)?.ceiling ?? 0;
  }

  async nextEpoch(scope: string): Promise<number> {
    return (await this.drawEpoch({ scope })).epoch;
  }

  async drawEpoch({ scope }: { scope: string }): Promise<DrawnEpoch> {
    const last = this.epochs.get(scope);
    const released = this.releases.get(scope);
    const e = (last ?? 0) + 1;
    this.epochs.set(scope, e);
    return { epoch: e, before: last === undefined ? undefined : { epoch: last, ...(released ? { released } : {}) } };
  }

  async recordRelease({ scope, epoch, atMs }: { scope: string; epoch: number; atMs: number }): Promise<boolean> {
    if (this.epochs.get(scope) !== epoch) return false;
    this.releases.set(scope, { epoch, atMs });
    return true;
  }

  async claim({ section, epoch }: CeilingClaim): Promise<number> {
    await Promise.resolve();
    const s = this.sections.get(section) ?? { ceiling: 0, epoch: 0 };
    if (epoch < s.epoch) throw new FencedError(`claim ${section}: epoch ${epoch} < ${s.epoch}`);
    this.sections.set(section, { ceiling: s.ceiling, epoch });
    this.events.push({ op: 'claim', section, epoch, ceiling: s.ceiling });
    return s.ceiling;
  }

  async raise({ section, ceiling, epoch }: CeilingRaise): Promise<void> {
    this.raiseCalls++;
    if (this.beforeRaise) await this.beforeRaise(section, ceiling);
    await Promise.resolve();
    if (this.failNextRaise) {
      const err = this.failNextRaise;
      this.failNextRaise = undefined;
      throw err;
    }
    const s = this.sections.get(section) ?? { ceiling: 0, epoch: 0 };
    if (epoch < s.epoch) throw new FencedError(`raise ${section}: epoch ${epoch} < ${s.epoch}`);
    this.sections.set(section, { ceiling: Math.max(s.ceiling, ceiling), epoch });
    this.events.push({ op: 'raise', section, epoch, ceiling });
  }
}

interface FakeInbox {
  entries: Entry[];
  index: Map<string, number>;
  readers: Map<number, Set<string>>;
}

/** Timeline store double honouring the port contract (idempotent, seq > head, atomic). */
export class FakeTimelineStore implements TimelineStore {
  readonly inboxes = new Map<string, FakeInbox>();
  appendCalls = 0;
  /** Called before an append is applied; may throw to fail it (nothing is written). */
  beforeAppend: ((inbox: InboxKey, entries: Entry[]) => Promise<void> | void) | undefined;
  /** Called after an append was applied; may throw (the write landed, the caller sees an error). */
  afterAppend: ((inbox: InboxKey, entries: Entry[]) => void) | undefined;
  /**
   * When set, an append tells its durable listener once the entries are written, then waits
   * for this before it resolves (as the Redis-cached store does with its cache write).
   */
  laterWork: Promise<void> | undefined;
  /** Thrown (once) by the next addReaders. */
  failNextAddReaders: Error | undefined;

  private box(inbox: string): FakeInbox {
    let b = this.inboxes.get(inbox);
    if (!b) this.inboxes.set(inbox, (b = { entries: [], index: new Map(), readers: new Map() }));
    return b;
  }

  all(inbox: string): Entry[] {
    return [...(this.inboxes.get(inbox)?.entries ?? [])];
  }

  async append({ inbox, entries, durable }: TimelineAppend): Promise<StoredOutcome[]> {
    this.appendCalls++;
    if (this.beforeAppend) await this.beforeAppend(inbox, entries);
    await Promise.resolve();
    const b = this.box(inbox);
    let head = b.entries.at(-1)?.seq ?? 0;
    const seen = new Map<string, number>();
    const outcomes: StoredOutcome[] = [];
    const toWrite: Entry[] = [];
    for (const e of entries) {
      const seq = b.index.get(dedupKeyOf(e)) ?? seen.get(dedupKeyOf(e));
      const original = seq === undefined ? undefined : (b.entries.find((x) => x.seq === seq) ?? toWrite.find((x) => x.seq === seq));
      if (original !== undefined) {
        outcomes.push({ seq: original.seq, duplicate: true, original: structuredClone(original) });
        continue;
      }
      if (e.seq <= head) throw new Error(`seq ${e.seq} not above head ${head} in ${inbox}`);
      head = e.seq;
      seen.set(dedupKeyOf(e), e.seq);
      toWrite.push(structuredClone(e));
      outcomes.push({ seq: e.seq, duplicate: false });
    }
    for (const e of toWrite) {
      b.entries.push(e);
      b.index.set(dedupKeyOf(e), e.seq);
    }
    this.afterAppend?.(inbox, entries);
    if (this.laterWork) {
      durable?.(outcomes);
      await this.laterWork;
    }
    return outcomes;
  }

  async findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    await Promise.resolve();
    const b = this.box(input.inbox);
    const out = new Map<DedupKey, number>();
    for (const a of input.keys) {
      const s = b.index.get(a);
      if (s !== undefined) out.set(a, s);
    }
    return out;
  }

  async getEntry({ inbox, seq }: InboxEntryRef): Promise<Entry | null> {
    return structuredClone(this.box(inbox).entries.find((e) => e.seq === seq) ?? null);
  }

  async readAfter({ inbox, afterSeq, limit }: InboxPageAfter): Promise<Entry[]> {
    return this.box(inbox)
      .entries.filter((e) => e.seq > afterSeq)
      .slice(0, limit);
  }

  async readBefore({ inbox, beforeSeq, limit }: InboxPageBefore): Promise<Entry[]> {
    return this.box(inbox)
      .entries.filter((e) => e.seq < beforeSeq)
      .reverse()
      .slice(0, limit);
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    await Promise.resolve();
    return this.box(inbox).entries.at(-1)?.seq ?? 0;
  }

  async addReaders({ inbox, seq, readers }: EntryReaders): Promise<string[]> {
    await Promise.resolve();
    if (this.failNextAddReaders) {
      const err = this.failNextAddReaders;
      this.failNextAddReaders = undefined;
      throw err;
    }
    const b = this.box(inbox);
    let set = b.readers.get(seq);
    if (!set) b.readers.set(seq, (set = new Set()));
    for (const r of readers) set.add(r);
    return [...set].sort();
  }

  async getReaders({ inbox, seq }: InboxEntryRef): Promise<string[]> {
    await Promise.resolve();
    return [...(this.box(inbox).readers.get(seq) ?? [])].sort();
  }
}

/** Push bus double: records every publish. */
export class RecordingPushBus implements PushBus {
  readonly published: PushMessage[] = [];
  publish(msg: PushMessage): void {
    this.published.push(structuredClone(msg));
  }
  publishToEach({ inboxes, msg }: PushToEach): void {
    for (const inbox of inboxes) this.publish({ ...msg, inbox });
  }
  subscribe(): () => void {
    return () => {};
  }
  isOnline(): boolean | undefined {
    return undefined;
  }
  async close(): Promise<void> {}
  forInbox(inbox: string): PushMessage[] {
    return this.published.filter((m) => m.inbox === inbox);
  }
}

/** Logger double that keeps warn/error records (tests assert nothing is silently swallowed). */
export class MemoryLogger implements Logger {
  readonly records: Array<{ level: string; obj: object; msg?: string }> = [];
  debug(obj: object, msg?: string): void {
    this.records.push({ level: 'debug', obj, msg });
  }
  info(obj: object, msg?: string): void {
    this.records.push({ level: 'info', obj, msg });
  }
  warn(obj: object, msg?: string): void {
    this.records.push({ level: 'warn', obj, msg });
  }
  error(obj: object, msg?: string): void {
    this.records.push({ level: 'error', obj, msg });
  }
  child(): Logger {
    return this;
  }
}

/** A promise plus its resolver, for gating fakes. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
