/**
 * `inbox USER --after N`: what a user's inbox holds after a seq (support and debugging);
 * `inbox USER --conversations`: its conversation index, checked against a recount.
 */
import type { Command } from 'commander';
import type { Entry } from '@seqline/core';
import { adminClientFor, outputOf } from './globals.ts';
import { printInboxConversations, type InboxConversationsView } from './conversations-view.ts';
import { nonNegativeInt, positiveInt } from './numbers.ts';
import { emit, isoTime, oneLine, table } from './output.ts';

interface InboxView {
  tenant: string;
  user: string;
  headSeq: number;
  entries: Entry[];
  hasMore: boolean;
}

export function registerInboxCommand(program: Command): void {
  program
    .command('inbox')
    .description("list a user's inbox entries after a seq")
    .argument('<user>', 'user id')
    .option('--after <seq>', 'entries with a seq above this', nonNegativeInt, 0)
    .option('--limit <n>', 'at most this many entries', positiveInt, 50)
    .option('--tenant <id>', 'tenant of the user', 'default')
    .option('--conversations', 'show the conversation index instead, and whether it equals a recount of the inbox')
    .action(async (user: string, opts: { after: number; limit: number; tenant: string; conversations?: boolean }, cmd: Command) => {
      if (opts.conversations === true) {
        const path = `inbox/${encodeURIComponent(opts.tenant)}/${encodeURIComponent(user)}/conversations`;
        printInboxConversations(outputOf(cmd), await (await adminClientFor(cmd)).get<InboxConversationsView>(path));
        return;
      }
      const query = new URLSearchParams({ after: String(opts.after), limit: String(opts.limit) });
      const path = `inbox/${encodeURIComponent(opts.tenant)}/${encodeURIComponent(user)}?${query.toString()}`;
      const view = await (await adminClientFor(cmd)).get<InboxView>(path);
      emit(outputOf(cmd), view, () => describeInbox(view, opts.after));
    });
}

function describeInbox(v: InboxView, after: number): string {
  const head = `inbox ${v.user} (tenant ${v.tenant}): head seq ${v.headSeq}`;
  if (v.entries.length === 0) return `${head}\nno entries after seq ${after}`;
  const rows = v.entries.map((e) => [e.seq, e.kind, `${e.conv.type}:${e.conv.id}`, e.from, isoTime(e.sendTime), summary(e)]);
  const more = v.hasMore ? `\n… more: --after ${v.entries.at(-1)?.seq ?? after}` : '';
  return `${head}\n${table(['seq', 'kind', 'conv', 'from', 'sent', 'content'], rows)}${more}`;
}

function summary(e: Entry): string {
  if (e.kind === 'recall' && e.recall) return `recalls ${e.recall.appinfo}`;
  if (e.kind === 'receipt') return `read by ${(e.readBy ?? []).join(', ')} (seq ${e.referSeq ?? '?'})`;
  if (e.kind === 'read') return `read up to seq ${e.referSeq ?? '?'}`;
  const body = e.body === undefined ? '' : JSON.stringify(e.body);
  return oneLine(`${e.type ?? ''} ${body}`);
}
