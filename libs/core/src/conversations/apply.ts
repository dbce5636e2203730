/**
 * The incremental conversation index: a functional core that both the LMDB adapter (sync,
 * inside its write transaction) and the CQL adapter (async, the inbox's single owner) drive.
 *
 *   for each appended entry, in seq order:
 *     facts = emptyFacts()
 *     while (need = conversationFactsNeeded(entry, facts, self)) answer(need) into facts
 *     changes = applyToConversations(entry, facts, self)   // persist them before the next entry
 *
 * A message, read or clear needs one round of lookups; a recall, edit, delete or read by seqs two
 * (first the targets, then their conversations). indexEntrySync/indexEntryAsync run the loop.
 */
import { editedKey, recalledKey } from '../dedup-key.ts';
import type { Entry } from '../entry.ts';
import { InternalError } from '../errors.ts';
import { ChangeBuilder, type ConversationChanges } from './changes.ts';
import { emptyFacts, FactLookup, isEmptyRequest, type ConversationFacts, type FactsRequest } from './facts.ts';
import {
  conversationKey,
  deletedSeqsOf,
  editHits,
  editWins,
  emptyConvRecord,
  groupTitleOf,
  isActivity,
  isConversationRead,
  mentionsUser,
  nextClearedSeq,
  nextReadSeq,
  readsOnSend,
  recallHits,
  recordTitle,
  titleWins,
  v1ReadSeqs,
  type ConvRecord,
  type UnreadItem,
} from './rules.ts';

/** What the adapter must still look up before `entry` can be applied; null when nothing. */
export function conversationFactsNeeded(entry: Entry, facts: ConversationFacts, self: string): FactsRequest | null {
  const look = new FactLookup(facts);
  plan(entry, self, look, new ChangeBuilder(entry));
  return isEmptyRequest(look.missing) ? null : look.missing;
}

/**
 * The new records and side-table rows once `entry` is applied. `facts.records` holds the
 * current records of the conversations involved (as asked by conversationFactsNeeded).
 * Throws InternalError when a fact is missing or the entry was already applied.
 */
export function applyToConversations(entry: Entry, facts: ConversationFacts, self: string): ConversationChanges {
  const look = new FactLookup(facts);
  const out = new ChangeBuilder(entry);
  plan(entry, self, look, out);
  if (!isEmptyRequest(look.missing)) {
    throw new InternalError(`conversation facts missing for seq ${entry.seq}: ${JSON.stringify(look.missing)}`);
  }
  return out.build();
}

/** Answers a request by filling `facts` (adds to its maps). */
export type FactsAnswerSync = (need: FactsRequest, facts: ConversationFacts) => void;
export type FactsAnswerAsync = (need: FactsRequest, facts: ConversationFacts) => Promise<void>;

/** More rounds than the planner ever needs means an adapter is not filling in its answers. */
const MAX_ROUNDS = 4;

export function indexEntrySync(entry: Entry, self: string, answer: FactsAnswerSync): ConversationChanges {
  const facts = emptyFacts();
  for (let round = 0; ; round++) {
    const need = conversationFactsNeeded(entry, facts, self);
    if (need === null) return applyToConversations(entry, facts, self);
    if (round === MAX_ROUNDS) throw new InternalError(`conversation facts not answered for seq ${entry.seq}`);
    answer(need, facts);
  }
}

export async function indexEntryAsync(entry: Entry, self: string, answer: FactsAnswerAsync): Promise<ConversationChanges> {
  const facts = emptyFacts();
  for (let round = 0; ; round++) {
    const need = conversationFactsNeeded(entry, facts, self);
    if (need === null) return applyToConversations(entry, facts, self);
    if (round === MAX_ROUNDS) throw new InternalError(`conversation facts not answered for seq ${entry.seq}`);
    await answer(need, facts);
  }
}

/**
 * Runs the rules against what is known. While a fact is missing its part is skipped (and asked
 * for); such a partial result is never used: factsNeeded discards it, apply refuses it.
 *
 * Which conversations an entry touches (their asOfSeq becomes its seq; sync returns them):
 * an activity entry its own; a read or clear its `conv`; a read by seqs the conversations of the
 * activity entries it names; a recall or an edit its own `conv`, and a hit's target's; a delete
 * those of the activity entries it names. Only existing conversations: nothing but activity
 * creates one.
 */
function plan(entry: Entry, self: string, look: FactLookup, out: ChangeBuilder): void {
  if (isActivity(entry)) return planActivity(entry, self, look, out);
  switch (entry.kind) {
    case 'read':
      return isConversationRead(entry) ? planConversationRead(entry, look, out) : planV1Read(entry, look, out);
    case 'clear':
      return planClear(entry, look, out);
    case 'recall':
      return planRecall(entry, look, out);
    case 'edit':
      return planEdit(entry, look, out);
    case 'delete':
      return planDelete(entry, look, out);
    default:
      return; // receipt, tick, group.tier: no conversation changes
  }
}

function planActivity(entry: Entry, self: string, look: FactLookup, out: ChangeBuilder): void {
  const key = conversationKey(entry.conv);
  const before = look.record(key);
  const reads = readsOnSend(entry, self);
  const readItems = reads ? look.unreadUpTo(key, entry.seq) : [];
  if (before === undefined || readItems === undefined) return;
  const rec = out.touch(key, before, emptyConvRecord(entry.conv));
  rec.lastSeq = entry.seq;
  rec.lastMsgSeq = entry.seq;
  const title = groupTitleOf(entry);
  if (title !== null && titleWins(recordTitle(rec), title)) {
    rec.title = title.name;
    rec.titleRev = title.rev;
  }
  out.visibleAdd.push({ convKey: key, seq: entry.seq });
  if (reads) {
    rec.readSeq = entry.seq;
    out.removeUnreadUpTo(rec, readItems, entry.seq);
  } else if (entry.kind === 'msg') {
    out.addUnread(rec, { convKey: key, seq: entry.seq, mention: mentionsUser(entry, self) });
  }
}

function planConversationRead(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  const key = conversationKey(entry.conv);
  const upTo = entry.upToSeq as number;
  const before = look.record(key);
  const items = look.unreadUpTo(key, upTo);
  if (before === undefined || items === undefined || before === null) return;
  moveReadCursor(out.touch(key, before, before), nextReadSeq(before, upTo), items, out);
}

function moveReadCursor(rec: ConvRecord, readSeq: number, items: readonly UnreadItem[], out: ChangeBuilder): void {
  if (readSeq <= rec.readSeq) return;
  rec.readSeq = readSeq;
  out.removeUnreadUpTo(rec, items, readSeq);
}

/** A read by seqs moves each conversation's cursor to the highest seq it names there. */
function planV1Read(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  const highest = new Map<string, { conv: Entry['conv']; seq: number }>();
  let known = true;
  for (const seq of new Set(v1ReadSeqs(entry))) {
    if (seq >= entry.seq) continue;
    const target = look.entryBySeq(seq);
    if (target === undefined) {
      known = false;
      continue;
    }
    if (target === null || !isActivity(target)) continue;
    const key = conversationKey(target.conv);
    const h = highest.get(key);
    if (h === undefined || h.seq < target.seq) highest.set(key, { conv: target.conv, seq: target.seq });
  }
  if (!known) return;
  for (const [key, { seq }] of highest) {
    const before = look.record(key);
    const items = look.unreadUpTo(key, seq);
    if (before === undefined || items === undefined || before === null) continue;
    moveReadCursor(out.touch(key, before, before), nextReadSeq(before, seq), items, out);
  }
}

function planClear(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  const key = conversationKey(entry.conv);
  const before = look.record(key);
  // Without upToSeq the clear goes to lastSeq, not known yet: ask for every unread item.
  const items = look.unreadUpTo(key, entry.upToSeq ?? Number.MAX_SAFE_INTEGER);
  if (before === undefined || items === undefined || before === null) return;
  const rec = out.touch(key, before, before);
  const cleared = nextClearedSeq(before, entry.upToSeq);
  if (cleared <= rec.clearedSeq) return;
  rec.clearedSeq = cleared;
  out.removeUnreadUpTo(rec, items, cleared);
  // lastMsgSeq is the newest visible item: if it is cleared, nothing above the mark is visible.
  if (rec.lastMsgSeq <= cleared) rec.lastMsgSeq = 0;
}

function planRecall(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  touchNamed(entry, look, out);
  if (entry.recall === undefined) return;
  const target = look.entryByKey(recalledKey(entry.from, entry.recall));
  if (target === undefined || !recallHits(entry, target)) return;
  hideItems(target.conv, [target.seq], look, out);
}

/**
 * A recall or an edit names its conversation (`conv`) whether or not its message is in this
 * inbox (a group admin recalling a stream message holds no copy of it): the conversation is
 * touched all the same, so its state is at or past every entry that names it (sync, pushes).
 */
function touchNamed(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  const before = look.record(conversationKey(entry.conv));
  if (before !== undefined && before !== null) out.touch(conversationKey(entry.conv), before, before);
}

function planEdit(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  touchNamed(entry, look, out);
  if (entry.edit === undefined) return;
  const target = look.entryByKey(editedKey(entry.from, entry.edit));
  if (target === undefined || !editHits(entry, target)) return;
  const key = conversationKey(target.conv);
  const before = look.record(key);
  const current = look.edit(target.seq);
  if (before === undefined || current === undefined || before === null) return;
  out.touch(key, before, before);
  if (editWins(current, entry.edit)) out.edits.push({ seq: target.seq, edit: entry.edit });
}

function planDelete(entry: Entry, look: FactLookup, out: ChangeBuilder): void {
  const byConv = new Map<string, { conv: Entry['conv']; seqs: number[] }>();
  const found: number[] = [];
  let known = true;
  for (const seq of deletedSeqsOf(entry)) {
    const target = look.entryBySeq(seq);
    if (target === undefined) {
      known = false;
      continue;
    }
    if (target === null) continue;
    found.push(seq);
    if (!isActivity(target)) continue;
    const key = conversationKey(target.conv);
    const group = byConv.get(key);
    if (group === undefined) byConv.set(key, { conv: target.conv, seqs: [seq] });
    else group.seqs.push(seq);
  }
  if (!known) return;
  out.deleted.push(...found);
  for (const { conv, seqs } of byConv.values()) hideItems(conv, seqs, look, out);
}

/**
 * Hides items (recall, delete) of one conversation: they leave the visible and unread tables,
 * and `last` moves to the newest item still visible.
 */
function hideItems(conv: Entry['conv'], seqs: number[], look: FactLookup, out: ChangeBuilder): void {
  const key = conversationKey(conv);
  const before = look.record(key);
  const unread = seqs.map((seq) => look.unreadAt(key, seq));
  const newest = look.newestVisible(key, seqs);
  if (before === undefined || before === null || newest === undefined) return;
  const rec = out.touch(key, before, before);
  for (const seq of seqs) out.visibleRemove.push({ convKey: key, seq });
  for (const item of unread) if (item) out.removeUnread(rec, item);
  if (seqs.includes(rec.lastMsgSeq)) rec.lastMsgSeq = newest !== null && newest > rec.clearedSeq ? newest : 0;
}
