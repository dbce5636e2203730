/**
 * The operator's view of one inbox's conversation index (`seqline-admin inbox USER
 * --conversations`) and its rebuild (`seqline-admin conversations rebuild USER`). The view is
 * checked against core's recount of the inbox, the same oracle the no-drift tests use: it says
 * "exact as of seq N" or lists each field that differs.
 */
import {
  conversationKey,
  InternalError,
  inboxKey,
  recountConversations,
  type ConversationIndex,
  type ConversationRebuildReport,
  type ConversationState,
  type ConvRecord,
  type Entry,
  type InboxKey,
  type InboxWriter,
  type TimelineStore,
} from '@seqline/core';

export interface AdminConversationDeps {
  timeline: TimelineStore;
  /** The index as the messaging ops read it. */
  conversations?: ConversationIndex;
  /** The inbox's single writer (in process, or the shard owner over NATS): rebuilds run in its queue. */
  inboxWriter?: Pick<InboxWriter, 'rebuildConversations'>;
}

/** Fields of a record the recount states (`last` is lastMsgSeq on the index's side). */
export const CHECKED_FIELDS = ['lastSeq', 'lastMsgSeq', 'readSeq', 'clearedSeq', 'unread', 'mentions', 'asOfSeq'] as const;
export type CheckedField = (typeof CHECKED_FIELDS)[number];

export interface ConversationDifference {
  /** `user:bob`, `group:g1`. */
  conversation: string;
  /** `missing` / `extra`: the conversation is only in the recount / only in the index. */
  field: CheckedField | 'title' | 'missing' | 'extra';
  index: number | string | null;
  recount: number | string | null;
}

export interface ConversationCheck {
  /** True when the index equals the recount of the inbox's entries up to `asOfSeq`. */
  exact: boolean;
  /** The index's watermark the check was made at. */
  asOfSeq: number;
  /** Inbox entries recounted. */
  entries: number;
  differences: ConversationDifference[];
}

export interface InboxConversationsView {
  tenant: string;
  user: string;
  /** The inbox head (the index may trail it in CQL until the next append catches up). */
  headSeq: number;
  /** Newest activity first, each with `last` (its newest visible message, edit applied). */
  conversations: ConversationState[];
  check: ConversationCheck;
}

export interface RebuildView extends ConversationRebuildReport {
  tenant: string;
  user: string;
}

/** Conversations listed per index read, and entries per inbox read of the recount. */
const LIST_PAGE = 500;
const READ_PAGE = 1000;
/** Attempts at a view no append moved under (the index and the inbox are read apart). */
const STABLE_ATTEMPTS = 5;

export class AdminConversations {
  constructor(private readonly d: AdminConversationDeps) {}

  async view(tenant: string, user: string): Promise<InboxConversationsView> {
    const index = this.need(this.d.conversations, 'conversation index');
    const key = inboxKey(tenant, user);
    for (let attempt = 1; ; attempt++) {
      const before = await index.headSeq(key);
      const conversations = await listAll(index, key);
      const [after, headSeq] = await Promise.all([index.headSeq(key), this.d.timeline.headSeq(key)]);
      // An append indexed between the two watermark reads may be half in the list: read again.
      if (after !== before && attempt < STABLE_ATTEMPTS) continue;
      const entries = await readUpTo(this.d.timeline, key, before);
      const differences = compare(conversations, recountConversations(entries, user));
      const check = { exact: differences.length === 0 && after === before, asOfSeq: before, entries: entries.length, differences };
      return { tenant, user, headSeq, conversations, check };
    }
  }

  async rebuild(tenant: string, user: string): Promise<RebuildView> {
    const writer = this.need(this.d.inboxWriter, 'inbox writer');
    const report = await writer.rebuildConversations(inboxKey(tenant, user));
    return { tenant, user, ...report };
  }

  private need<T>(dep: T | undefined, what: string): T {
    if (dep === undefined) throw new InternalError(`this admin service has no ${what}`);
    return dep;
  }
}

async function listAll(index: ConversationIndex, inbox: InboxKey): Promise<ConversationState[]> {
  const out: ConversationState[] = [];
  let beforeLastSeq: number | undefined;
  for (;;) {
    const page = await index.listConversations({
      inbox,
      ...(beforeLastSeq === undefined ? { limit: LIST_PAGE } : { limit: LIST_PAGE, beforeLastSeq }),
    });
    out.push(...page.convs);
    const last = page.convs.at(-1);
    if (!page.hasMore || last === undefined) return out;
    beforeLastSeq = last.lastSeq;
  }
}

/** The inbox's entries with seq <= upTo, ascending. */
async function readUpTo(timeline: TimelineStore, inbox: InboxKey, upTo: number): Promise<Entry[]> {
  const out: Entry[] = [];
  let after = 0;
  while (after < upTo) {
    const page = await timeline.readAfter({ inbox, afterSeq: after, limit: READ_PAGE });
    for (const e of page) if (e.seq <= upTo) out.push(e);
    const last = page.at(-1);
    if (page.length < READ_PAGE || last === undefined) break;
    after = last.seq;
  }
  return out;
}

/** Every field of every conversation where the index and the recount disagree, by conversation key. */
export function compare(index: readonly ConvRecord[], recount: ReadonlyMap<string, ConvRecord>): ConversationDifference[] {
  const out: ConversationDifference[] = [];
  const seen = new Set<string>();
  for (const rec of index) {
    const key = conversationKey(rec.conv);
    seen.add(key);
    const truth = recount.get(key);
    if (truth === undefined) {
      out.push({ conversation: key, field: 'extra', index: rec.lastSeq, recount: null });
      continue;
    }
    for (const field of CHECKED_FIELDS) {
      if (rec[field] !== truth[field]) out.push({ conversation: key, field, index: rec[field], recount: truth[field] });
    }
    if (rec.title !== truth.title) out.push({ conversation: key, field: 'title', index: rec.title ?? null, recount: truth.title ?? null });
  }
  for (const [key, truth] of recount) {
    if (!seen.has(key)) out.push({ conversation: key, field: 'missing', index: null, recount: truth.lastSeq });
  }
  return out.sort((a, b) => a.conversation.localeCompare(b.conversation));
}
