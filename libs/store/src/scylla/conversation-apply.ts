/**
 * How the CQL index writer (conversation-writer.ts) indexes a run of entries above the
 * watermark: their changes merged into as few writes as the facts they need allow.
 */
import {
  changesAtHorizon,
  indexEntryAsync,
  isEmptyRequest,
  splitKey,
  type ConversationChanges,
  type Entry,
  type FactsAnswerAsync,
  type InboxKey,
  type WriteGuard,
} from '@seqline/core';
import type { IndexWriteBatcher } from './conversation-commit.ts';
import type { ConversationFactsReader } from './conversation-facts-reader.ts';
import type { IndexedCollector } from './conversation-indexed.ts';
import {
  answerFromMemory,
  changesNothing,
  learnChanges,
  learnRecords,
  mergeChanges,
  type ConversationMemory,
  type InboxMemory,
} from './conversation-memory.ts';
import { changeStatements, type ConversationStatements } from './conversation-tables.ts';

/** Entries merged into one write at most (its statements stay well below a mutation's size limit). */
const MAX_MERGED = 256;

/** The writer's parts an apply writes and reads with. */
export interface ApplyDeps {
  readonly q: ConversationStatements;
  readonly batcher: IndexWriteBatcher;
  readonly facts: ConversationFactsReader;
  readonly memory: ConversationMemory;
}

/**
 * Indexes `entries` (seq order, all above the watermark). Their changes are held while every
 * fact comes from memory and written as one merged batch; a fact that must be read first
 * writes what is held. An entry that changes nothing (a receipt) adds no rows: its watermark
 * rides with the write. `collected` hears of every entry applied and the facts it was given.
 */
export async function applyEntries(
  deps: ApplyDeps,
  inbox: InboxKey,
  mem: InboxMemory,
  entries: readonly Entry[],
  guard?: WriteGuard,
  collected?: IndexedCollector,
): Promise<void> {
  const self = splitKey(inbox).id;
  let held: ConversationChanges[] = [];
  let heldUpTo: number | undefined;
  let heldEntries = 0;
  const flush = async (): Promise<void> => {
    if (heldUpTo === undefined) return;
    const watermark = heldUpTo;
    const cells = mem.pendingCells;
    const statements = changeStatements(deps.q, inbox, mergeChanges(held), watermark, cells);
    [held, heldUpTo, heldEntries] = [[], undefined, 0];
    await deps.batcher.write(statements, guard);
    mem.watermark = watermark;
    if (mem.pendingCells === cells) mem.pendingCells = undefined;
    deps.memory.touched(inbox, mem);
  };
  const answer: FactsAnswerAsync = async (need, facts) => {
    const rest = answerFromMemory(mem, need, facts);
    if (isEmptyRequest(rest)) return;
    await flush();
    await deps.facts.answer(inbox, rest, facts);
    learnRecords(mem, rest.convKeys, facts);
    collected?.learn(facts);
  };
  for (const entry of entries) {
    const changes = changesAtHorizon(await indexEntryAsync(entry, self, answer), mem.horizon.horizon);
    collected?.apply(entry, changes);
    learnChanges(mem, changes);
    if (!changesNothing(changes)) held.push(changes);
    heldUpTo = entry.seq;
    if (++heldEntries >= MAX_MERGED) await flush();
  }
  await flush();
}
