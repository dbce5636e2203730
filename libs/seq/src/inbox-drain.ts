/**
 * The drain of one inbox's queue in an InboxOwner (inbox-owner.ts): run after run of its pending
 * ops (inbox-queue.ts), each in the inbox's turn — appends and receipts merged, a rebuild or a
 * catch-up of its index alone.
 */
import { FencedError, InternalError } from '@seqline/core';
import type {
  AppendOutcome,
  Clock,
  ConversationCatchUp,
  ConversationRebuilder,
  ConversationRebuildReport,
  DurableListener,
  Logger,
  NewEntry,
  TimelineStore,
} from '@seqline/core';
import { readersByAppinfo, takeRun } from './inbox-queue.ts';
import type { AppendOp, InboxState, ReceiptOp, RunLimits } from './inbox-queue.ts';
import { planReceipts } from './receipt-plan.ts';

/** What an inbox's ops run with: its owner's stores, bounds and writer. */
export interface InboxTurns {
  timeline: TimelineStore;
  rebuilder: ConversationRebuilder | undefined;
  catchUp: ConversationCatchUp | undefined;
  limits: RunLimits;
  clock: Clock;
  logger: Logger;
  /** InboxOwner.write: allocates, appends durably, then pushes; outcomes align with `entries`. */
  write(state: InboxState, entries: NewEntry[], durable?: DurableListener): Promise<AppendOutcome[]>;
}

export async function drain(state: InboxState, turns: InboxTurns): Promise<void> {
  // Yield once so calls made in the same tick are merged into the first run.
  await Promise.resolve();
  try {
    while (state.pending.length > 0) {
      const run = takeRun(state.pending, turns.limits);
      const [only] = run;
      // The usual run, one append alone: nothing to merge or to retry apart.
      if (run.length === 1 && only?.kind === 'append') await turns.write(state, only.entries, only.durable).then(only.resolve, only.reject);
      else if (only?.kind === 'rebuild') await rebuild(state, turns).then(only.resolve, only.reject);
      else if (only?.kind === 'catch-up') await catchUpIndex(state, turns).then(only.resolve, only.reject);
      else await execute(state, run as AppendOp[] | ReceiptOp[], turns);
    }
  } finally {
    state.draining = undefined;
    state.lastUsed = turns.clock.now();
  }
}

/** Runs merged; if a merged run fails, retries each op alone so one bad op fails only itself. */
async function execute(state: InboxState, run: AppendOp[] | ReceiptOp[], turns: InboxTurns): Promise<void> {
  try {
    await executeRun(state, run, turns);
  } catch (err) {
    if (run.length === 1 || err instanceof FencedError) {
      for (const op of run) op.reject(err);
      return;
    }
    turns.logger.warn({ inbox: state.inbox, ops: run.length, err }, 'merged inbox write failed; retrying ops one by one');
    for (const op of run) {
      try {
        await executeRun(state, op.kind === 'append' ? [op] : [op], turns); // narrows to one run type
      } catch (e) {
        op.reject(e);
      }
    }
  }
}

async function executeRun(state: InboxState, run: AppendOp[] | ReceiptOp[], turns: InboxTurns): Promise<void> {
  if (run[0]?.kind === 'append') {
    const ops = run as AppendOp[];
    const outcomes = await turns.write(
      state,
      ops.flatMap((op) => op.entries),
    );
    let at = 0;
    for (const op of ops) op.resolve(outcomes.slice(at, (at += op.entries.length)));
  } else {
    const ops = run as ReceiptOp[];
    await applyReceipts(state, readersByAppinfo(ops), turns);
    for (const op of ops) op.resolve();
  }
}

/** The store's rebuilder (fenced by the caller in distributed mode), run in the inbox's turn. */
function rebuild(state: InboxState, { rebuilder }: InboxTurns): Promise<ConversationRebuildReport> {
  if (rebuilder === undefined) return Promise.reject(new InternalError('this inbox owner has no conversation index to rebuild'));
  return rebuilder.rebuildConversations(state.inbox);
}

/** The store's catch-up (fenced by the caller in distributed mode), run in the inbox's turn. */
function catchUpIndex(state: InboxState, { catchUp }: InboxTurns): Promise<number> {
  if (catchUp === undefined) return Promise.reject(new InternalError('this inbox owner has no conversation index to catch up'));
  return catchUp.catchUpConversations({ inbox: state.inbox });
}

/**
 * Receipt entries are appended first and the reader set merged after: if we fail between
 * the two, a retry sees the set not grown yet and rewrites the same receipt appinfo, which
 * dedups. The other order could lose the receipt entry for good.
 */
async function applyReceipts(state: InboxState, byAppinfo: Map<string, string[]>, turns: InboxTurns): Promise<void> {
  const todo = await planReceipts(turns.timeline, state.inbox, byAppinfo, turns.clock.now(), turns.logger);
  if (todo.length === 0) return;
  await turns.write(
    state,
    todo.map((p) => p.entry),
  );
  await Promise.all(todo.map((p) => turns.timeline.addReaders({ inbox: state.inbox, seq: p.seq, readers: p.readers })));
}
