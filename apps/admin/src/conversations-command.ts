/** `conversations rebuild USER`: rebuilds a user's conversation index from the inbox (run by its single writer). */
import type { Command } from 'commander';
import { adminClientFor, outputOf } from './globals.ts';
import { emit } from './output.ts';

interface RebuildView {
  tenant: string;
  user: string;
  differed: boolean;
  changedConversations: string[];
  conversations: number;
  entries: number;
  headSeq: number;
}

export function registerConversationsCommands(program: Command): void {
  const conversations = program.command('conversations').description("a user's conversation index (v1.1)");

  conversations
    .command('rebuild')
    .description("rebuild a user's conversation index from the inbox, and say whether it differed")
    .argument('<user>', 'user id')
    .option('--tenant <id>', 'tenant of the user', 'default')
    .action(async (user: string, opts: { tenant: string }, cmd: Command) => {
      const path = `conversations/${encodeURIComponent(opts.tenant)}/${encodeURIComponent(user)}/rebuild`;
      const view = await (await adminClientFor(cmd)).post<RebuildView>(path);
      emit(outputOf(cmd), view, () => describeRebuild(view));
    });
}

function describeRebuild(v: RebuildView): string {
  const what = `rebuilt the conversation index of ${v.user} (tenant ${v.tenant}): ${v.conversations} conversations from ${v.entries} entries, exact as of seq ${v.headSeq}`;
  if (!v.differed) return `${what}\nit did not differ: nothing changed`;
  const changed = v.changedConversations.length === 0 ? '' : `: ${v.changedConversations.join(', ')}`;
  return `${what}\nit DIFFERED and is fixed; ${v.changedConversations.length} conversation(s) changed${changed}`;
}
