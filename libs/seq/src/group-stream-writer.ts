/**
 * The single writer of read-fanout group streams: gseqs are allocated exactly like inbox seqs
 * (SectionAllocator over persisted ceilings, one section per group shard, `group-shard-<n>`),
 * appends for one group run one after another, and a burst of appends to a group is merged
 * into one store round trip. Dedup by appinfo, so a resent or redelivered message is stored
 * once and the original gseq is returned. Embedded mode runs one writer for every shard.
 */
import { dedupKeyOf, shardOf, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type {
  Entry,
  GroupAppend,
  GroupAppendOutcome,
  GroupKey,
  GroupStreamAppender,
  GroupStreamStore,
  Logger,
  NewEntry,
  SeqCeilingStore,
} from '@seqline/core';
import { dedupAgainst, resolveInBatchDuplicates } from './dedup.ts';
import { InboxOwnerClosedError, ShardNotOwnedError } from './errors.ts';
import { SectionAllocator } from './section-allocator.ts';
import type { KeyBudget } from './key-budget.ts';

/** The port's outcome type, re-exported so this package's index keeps its old export. */
export type { GroupAppendOutcome } from '@seqline/core';

export interface GroupStreamWriterOptions {
  streams: GroupStreamStore;
  ceilings: SeqCeilingStore;
  logger: Logger;
  /** Owner epoch (embedded: `ceilings.nextEpoch('group-writer')`; distributed: the shard lease's). */
  epoch: number;
  /** Fixed for a deployment. Default 64. */
  shardCount?: number;
  /**
   * Group shards this writer writes; default all (embedded mode). Distributed mode runs one
   * writer per owned shard, with the shard lease's epoch. Others fail with ShardNotOwnedError.
   */
  ownedShards?: number[];
  /** Ceiling step per section. Default 10 000. */
  step?: number;
  /** Most entries merged into one store append. Default 512. */
  maxBatchEntries?: number;
  /** The process's bound on the keys its section allocators remember (one per group here). */
  seqKeyBudget?: KeyBudget;
}

/** Section name of a group shard in the ceiling store (inbox shards are `inbox-shard-<n>`). */
export function sectionOfGroupShard(shard: number): string {
  return `group-shard-${shard}`;
}

type Op =
  | { kind: 'append'; entries: NewEntry[]; resolve(o: GroupAppendOutcome[]): void; reject(e: unknown): void }
  | { kind: 'head'; resolve(head: number): void; reject(e: unknown): void };

interface GroupState {
  pending: Op[];
  draining: Promise<void> | undefined;
}

export class GroupStreamWriter implements GroupStreamAppender {
  private readonly streams: GroupStreamStore;
  private readonly ceilings: SeqCeilingStore;
  private readonly logger: Logger;
  private readonly epoch: number;
  private readonly shardCount: number;
  private readonly step: number | undefined;
  private readonly maxBatchEntries: number;
  private readonly seqKeyBudget: KeyBudget | undefined;
  private readonly allocators = new Map<number, SectionAllocator>();
  /** Only groups with work queued or running; dropped when drained (the head lives in the store). */
  private readonly states = new Map<GroupKey, GroupState>();
  private readonly owned: ReadonlySet<number> | undefined;
  private closed = false;

  constructor(options: GroupStreamWriterOptions) {
    this.streams = options.streams;
    this.ceilings = options.ceilings;
    this.logger = options.logger.child({ component: 'group-stream-writer', epoch: options.epoch });
    this.epoch = options.epoch;
    this.shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
    this.step = options.step;
    this.maxBatchEntries = options.maxBatchEntries ?? 512;
    this.seqKeyBudget = options.seqKeyBudget;
    if (options.ownedShards) {
      for (const s of options.ownedShards) {
        if (!Number.isInteger(s) || s < 0 || s >= this.shardCount) throw new RangeError(`bad shard ${s}`);
      }
      this.owned = new Set(options.ownedShards);
    }
  }

  /**
   * Claims the sections of the owned shards up front (otherwise each is claimed on first use):
   * a new owner's claim fences the previous owner's ceiling raises before it writes anything.
   * Without `ownedShards` this claims every shard.
   */
  async start(): Promise<void> {
    const shards = this.owned ?? Array.from({ length: this.shardCount }, (_, i) => i);
    await Promise.all([...shards].map((s) => this.allocatorFor(s)));
  }

  /** Appends in order; outcomes align with `entries`. Durable when resolved. */
  append({ group, entries }: GroupAppend): Promise<GroupAppendOutcome[]> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new InboxOwnerClosedError());
      const refused = this.notOwned(group);
      if (refused) return reject(refused);
      if (entries.length === 0) return resolve([]);
      this.schedule(group, { kind: 'append', entries, resolve, reject });
    });
  }

  /**
   * The stream head after every append queued before this call: a membership change that
   * records it as a window bound is ordered after those messages and before later ones.
   */
  headSeq(group: GroupKey): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new InboxOwnerClosedError());
      const refused = this.notOwned(group);
      if (refused) return reject(refused);
      this.schedule(group, { kind: 'head', resolve, reject });
    });
  }

  /** Groups with appends queued or running (metrics). */
  get activeGroups(): number {
    return this.states.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (;;) {
      const running = [...this.states.values()].flatMap((s) => (s.draining ? [s.draining] : []));
      if (running.length === 0) break;
      await Promise.all(running);
    }
    for (const alloc of this.allocators.values()) alloc.release();
  }

  private notOwned(group: GroupKey): ShardNotOwnedError | undefined {
    if (!this.owned) return undefined;
    const shard = shardOf(group, this.shardCount);
    return this.owned.has(shard) ? undefined : new ShardNotOwnedError(shard, group);
  }

  /** Puts `op` behind the group's pending ops, in memory (unlike a WorkQueue job, lost with the process), and starts their drain. */
  private schedule(group: GroupKey, op: Op): void {
    let state = this.states.get(group);
    if (!state) {
      state = { pending: [], draining: undefined };
      this.states.set(group, state);
    }
    state.pending.push(op);
    state.draining ??= this.drain(group, state);
  }

  private async drain(group: GroupKey, state: GroupState): Promise<void> {
    await Promise.resolve(); // appends made in the same tick merge into the first run
    try {
      while (state.pending.length > 0) {
        const first = state.pending[0] as Op;
        if (first.kind === 'head') {
          state.pending.shift();
          try {
            first.resolve(await this.streams.headSeq(group));
          } catch (err) {
            first.reject(err);
          }
          continue;
        }
        const run = this.takeAppends(state.pending);
        try {
          const outcomes = await this.write(
            group,
            run.flatMap((op) => op.entries),
          );
          let at = 0;
          for (const op of run) op.resolve(outcomes.slice(at, (at += op.entries.length)));
        } catch (err) {
          if (run.length > 1) this.logger.warn({ group, ops: run.length, err }, 'merged group append failed');
          for (const op of run) op.reject(err);
        }
      }
    } finally {
      state.draining = undefined;
      if (state.pending.length === 0) this.states.delete(group);
      else state.draining = this.drain(group, state);
    }
  }

  /** The longest prefix of appends within the batch bound (never reorders around a head op). */
  private takeAppends(pending: Op[]): Array<Extract<Op, { kind: 'append' }>> {
    const run: Array<Extract<Op, { kind: 'append' }>> = [];
    let entries = 0;
    while (pending.length > 0) {
      const op = pending[0] as Op;
      if (op.kind !== 'append') break;
      if (run.length > 0 && entries + op.entries.length > this.maxBatchEntries) break;
      entries += op.entries.length;
      run.push(op);
      pending.shift();
    }
    return run;
  }

  private async allocatorFor(shard: number): Promise<SectionAllocator> {
    let alloc = this.allocators.get(shard);
    if (!alloc) {
      alloc = new SectionAllocator({
        section: sectionOfGroupShard(shard),
        ceilings: this.ceilings,
        epoch: this.epoch,
        step: this.step,
        budget: this.seqKeyBudget,
        logger: this.logger,
      });
      this.allocators.set(shard, alloc);
    }
    if (!alloc.isStarted) await alloc.start();
    return alloc;
  }

  /** Dedups, allocates, appends durably. Seqs of a failed append are burnt (never reused). */
  private async write(group: GroupKey, entries: NewEntry[]): Promise<GroupAppendOutcome[]> {
    const alloc = await this.allocatorFor(shardOf(group, this.shardCount));
    const keys = entries.map(dedupKeyOf);
    const [head, found] = await Promise.all([this.streams.headSeq(group), this.streams.findSeqs({ group, keys: [...new Set(keys)] })]);
    alloc.observe(group, head);
    const { outcomes, fresh } = dedupAgainst(entries, keys, found);
    if (fresh.length === 0) return withoutOriginals(resolveInBatchDuplicates(outcomes, entries));

    const seqs = await alloc.next(group, fresh.length);
    const toStore: Entry[] = fresh.map((f, k) => ({ ...f.entry, seq: seqs[k] as number }));
    const results = await this.streams.append({ group, entries: toStore });
    if (results.length !== toStore.length) throw new Error(`store returned ${results.length} outcomes for ${toStore.length} entries`);
    let prev = head;
    const filled: (GroupAppendOutcome | undefined)[] = [...outcomes];
    results.forEach((r, k) => {
      const index = (fresh[k] as { index: number }).index;
      if (r.duplicate) {
        filled[index] = { seq: r.seq, duplicate: true };
      } else {
        filled[index] = { seq: r.seq, duplicate: false, prevSeq: prev };
        prev = r.seq;
      }
    });
    // Returns our outcome objects as they are (prevSeq kept); only in-batch repeats are new.
    return withoutOriginals(resolveInBatchDuplicates(filled, entries));
  }
}

/**
 * A group stream duplicate is answered with its gseq only: the writer dedups by findSeqs (no
 * entry read), and nothing that appends to a stream needs the original.
 */
function withoutOriginals(outcomes: GroupAppendOutcome[]): GroupAppendOutcome[] {
  return outcomes.map((o) => (o.original === undefined ? o : { seq: o.seq, duplicate: o.duplicate }));
}
