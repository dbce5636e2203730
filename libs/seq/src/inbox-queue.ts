/**
 * The per-inbox serial queue of the single writer: operations for one inbox run one after
 * another in arrival order; adjacent operations of the same kind are merged into one store
 * round trip (a burst of appends → one `timeline.append`), each caller keeping its own result.
 */
import type { AppendOutcome, ConversationRebuildReport, DurableListener, Entry, InboxKey, NewEntry } from '@seqline/core';

export interface AppendOp {
  kind: 'append';
  entries: NewEntry[];
  /** Told when the entries are durable, if the store says so before the append resolves. */
  durable?: DurableListener;
  resolve: (outcomes: AppendOutcome[]) => void;
  reject: (err: unknown) => void;
}

export interface ReceiptOp {
  kind: 'receipt';
  appinfo: string;
  readers: string[];
  resolve(): void;
  reject(err: unknown): void;
}

/** A rebuild of the inbox's conversation index: always runs alone, between the ops around it. */
export interface RebuildOp {
  kind: 'rebuild';
  resolve: (report: ConversationRebuildReport) => void;
  reject: (err: unknown) => void;
}

/** A catch-up of the inbox's conversation index (index-catch-ups.ts): runs alone, like a rebuild. */
export interface CatchUpOp {
  kind: 'catch-up';
  resolve: (watermark: number) => void;
  reject: (err: unknown) => void;
}

export type InboxOp = AppendOp | ReceiptOp | RebuildOp | CatchUpOp;

/** A state's failed appends (unsettled-appends.ts): their entries, and the head before the first of them (the push's prevSeq). */
export interface Unsettled {
  headBefore: number;
  entries: Entry[];
}

/** What the owner keeps per inbox while it is active; dropped when idle (see sweep). */
export interface InboxState {
  inbox: InboxKey;
  shard: number;
  /** Highest stored seq as this writer knows it; undefined = read it from the store first. */
  head: number | undefined;
  pending: InboxOp[];
  /** Set while a drain loop runs for this inbox. */
  draining: Promise<void> | undefined;
  lastUsed: number;
  /** Entries of failed appends that may have landed (unsettled-appends.ts). */
  unsettled?: Unsettled;
  /** Of those, the ones found stored, told of once the state's next store write succeeds. */
  landed?: Unsettled;
}

export interface RunLimits {
  /** Most entries merged into one store append. */
  maxEntries: number;
  /** Most operations merged into one run. */
  maxOps: number;
}

/**
 * Removes and returns the longest prefix of `pending` whose operations are all of the kind of
 * the first one, within the limits. Only a prefix is taken, so merging never reorders: a
 * receipt queued behind the append of its message still runs after that append.
 */
export function takeRun(pending: InboxOp[], limits: RunLimits): AppendOp[] | ReceiptOp[] | [RebuildOp] | [CatchUpOp] {
  const first = pending[0];
  if (first === undefined) return [];
  if (first.kind === 'rebuild' || first.kind === 'catch-up') return [pending.shift() as RebuildOp | CatchUpOp] as [RebuildOp] | [CatchUpOp];
  let n = 1;
  let entries = first.kind === 'append' ? first.entries.length : 0;
  while (n < pending.length && n < limits.maxOps) {
    const op = pending[n] as InboxOp;
    if (op.kind !== first.kind) break;
    if (op.kind === 'append') {
      if (entries + op.entries.length > limits.maxEntries) break;
      entries += op.entries.length;
    }
    n++;
  }
  const run = pending.splice(0, n);
  return first.kind === 'append' ? (run as AppendOp[]) : (run as ReceiptOp[]);
}

/** Readers per appinfo over a run of receipt ops, first-seen order. */
export function readersByAppinfo(ops: readonly ReceiptOp[]): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const op of ops) {
    let set = out.get(op.appinfo);
    if (!set) out.set(op.appinfo, (set = new Set()));
    for (const r of op.readers) set.add(r);
  }
  return new Map([...out].map(([appinfo, set]) => [appinfo, [...set]]));
}
