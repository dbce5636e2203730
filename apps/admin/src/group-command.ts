/** `group show ID`: tier, members, stream head and queue depth of one group. */
import type { Command } from 'commander';
import { adminClientFor, outputOf } from './globals.ts';
import { positiveInt } from './numbers.ts';
import { emit, isoTime, keyValues, table } from './output.ts';

interface QueueCounters {
  running: number;
  waiting: number;
  delayed: number;
}
interface PoolCounters {
  running: number;
  waiting: number;
  poolLimit: number;
  perGroupLimit: number;
}

interface GroupView {
  tenant: string;
  id: string;
  name: string;
  /** Absent from servers before group.rename. */
  nameRev?: number;
  admin: string;
  tier: string;
  naturalTier: string;
  fanout: string;
  memberCount: number;
  members: string[];
  membersTruncated: boolean;
  headGseq: number;
  createdAt: number;
  queue: { queues: Record<string, QueueCounters>; pools: Record<string, PoolCounters>; pendingForGroup: number | null };
}

export function registerGroupCommands(program: Command): void {
  const group = program.command('group').description('inspect groups');

  group
    .command('show')
    .description('tier, members, stream head and queue depth of a group')
    .argument('<id>', 'group id')
    .option('--tenant <id>', 'tenant of the group', 'default')
    .option('--members <n>', 'how many members to list', positiveInt, 50)
    .option('--members-after <user>', 'list members sorting after this user id (paging)')
    .action(async (id: string, opts: { tenant: string; members: number; membersAfter?: string }, cmd: Command) => {
      const query = new URLSearchParams({ memberLimit: String(opts.members) });
      if (opts.membersAfter !== undefined) query.set('membersAfter', opts.membersAfter);
      const path = `groups/${encodeURIComponent(opts.tenant)}/${encodeURIComponent(id)}?${query.toString()}`;
      const view = await (await adminClientFor(cmd)).get<GroupView>(path);
      emit(outputOf(cmd), view, () => describeGroup(view));
    });
}

function describeGroup(g: GroupView): string {
  const tier = g.tier === g.naturalTier ? g.tier : `${g.tier} (its size alone gives ${g.naturalTier}: inside the hysteresis band)`;
  const summary = keyValues([
    ['group', `${g.id} (tenant ${g.tenant})`],
    ['name', (g.nameRev ?? 0) > 0 ? `${g.name} (renamed ${g.nameRev} times; members rename with group.rename)` : g.name],
    ['admin', g.admin],
    ['tier', tier],
    ['fanout', g.fanout === 'read' ? 'read (one copy in the group stream)' : 'write (a copy per member inbox)'],
    ['members', g.memberCount],
    ['head gseq', g.headGseq],
    ['created', isoTime(g.createdAt)],
    ['pending jobs', g.queue.pendingForGroup ?? 'unknown (this queue cannot tell per group)'],
  ]);
  const queues = Object.entries(g.queue.queues);
  const queueTable =
    queues.length === 0
      ? 'queues: no consumers in the answering process'
      : table(
          ['queue', 'running', 'waiting', 'retry backoff'],
          queues.map(([name, q]) => [name, q.running, q.waiting, q.delayed]),
        );
  const pools = Object.entries(g.queue.pools);
  const poolTable =
    pools.length === 0
      ? 'pools: none in the answering process'
      : table(
          ['pool', 'running', 'waiting', 'pool size', 'per-group limit'],
          pools.map(([name, p]) => [name, p.running, p.waiting, p.poolLimit, p.perGroupLimit]),
        );
  const more = g.membersTruncated ? `\n… more members: --members-after ${g.members.at(-1) ?? ''}` : '';
  return `${summary}\n\n${queueTable}\n\n${poolTable}\n\nmembers (${g.members.length} of ${g.memberCount}):\n${g.members.join('\n')}${more}`;
}
