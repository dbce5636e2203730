/**
 * `inbox USER --conversations`: the inbox's conversation index, and whether it equals a recount
 * of the inbox (the server's AdminService makes both; this only prints them).
 */
import type { Entry } from '@seqline/core';
import { emit, oneLine, table, type Output } from './output.ts';

interface ConversationRow {
  conv: { type: string; id: string };
  lastSeq: number;
  lastMsgSeq: number;
  readSeq: number;
  unread: number;
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
  /** A group's name (absent for 1:1 chats). */
  title?: string;
  last: Entry | null;
}

interface Difference {
  conversation: string;
  field: string;
  index: number | string | null;
  recount: number | string | null;
}

export interface InboxConversationsView {
  tenant: string;
  user: string;
  headSeq: number;
  conversations: ConversationRow[];
  check: { exact: boolean; asOfSeq: number; entries: number; differences: Difference[] };
}

export function printInboxConversations(out: Output, view: InboxConversationsView): void {
  emit(out, view, () => describe(view));
}

function describe(v: InboxConversationsView): string {
  const head = `conversations of ${v.user} (tenant ${v.tenant}): ${v.conversations.length}, inbox head seq ${v.headSeq}`;
  const rows = v.conversations.map((c) => [
    c.title === undefined ? `${c.conv.type}:${c.conv.id}` : `${c.conv.type}:${c.conv.id} ${oneLine(JSON.stringify(c.title), 30)}`,
    c.lastSeq,
    c.readSeq,
    c.unread,
    c.mentions,
    c.clearedSeq,
    c.asOfSeq,
    preview(c.last),
  ]);
  const list =
    rows.length === 0
      ? 'no conversations'
      : table(['conversation', 'lastSeq', 'readSeq', 'unread', 'mentions', 'clearedSeq', 'asOfSeq', 'last'], rows);
  return `${head}\n${list}\n${verdict(v)}`;
}

/** "exact as of seq N", or each difference from the recount. */
function verdict(v: InboxConversationsView): string {
  const { check } = v;
  const trailing = check.asOfSeq < v.headSeq ? ` (the index trails the inbox head ${v.headSeq}; the next append catches it up)` : '';
  if (check.exact) return `index: exact as of seq ${check.asOfSeq} (a recount of ${check.entries} entries agrees)${trailing}`;
  if (check.differences.length === 0) return `index: moved during the check (appends in flight); run it again`;
  const rows = check.differences.map((d) => [d.conversation, d.field, d.index ?? '-', d.recount ?? '-']);
  return (
    `index: DIFFERS from a recount of ${check.entries} entries at seq ${check.asOfSeq}${trailing}:\n` +
    `${table(['conversation', 'field', 'index', 'recount'], rows)}\n` +
    'fix it with: seqline-admin conversations rebuild <user>'
  );
}

function preview(last: Entry | null): string {
  if (last === null) return '-';
  const body = last.body === undefined ? '' : JSON.stringify(last.body);
  return oneLine(`#${last.seq} ${last.from}: ${body}`, 40);
}
