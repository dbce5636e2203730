/** `limits show|set`: per-group concurrency, worker pools, in-flight caps, sockets per user. */
import type { Command } from 'commander';
import type { Limits } from '@seqline/core';
import { UsageError } from './errors.ts';
import { adminClientFor, outputOf } from './globals.ts';
import { definedFields, positiveInt } from './numbers.ts';
import { emit, keyValues } from './output.ts';

interface LimitsView {
  limits: Limits;
  version: number;
}

const FLAGS: Array<[keyof Limits, string, string]> = [
  ['largeGroupConcurrency', '--large-group-concurrency <n>', 'fanout jobs of one large group running at once'],
  ['smallPool', '--small-pool <n>', 'small-group fanout workers per process'],
  ['largePool', '--large-pool <n>', 'large-group fanout workers per process'],
  ['hugePool', '--huge-pool <n>', 'huge-group (read-fanout) workers per process'],
  ['perUserInFlight', '--per-user-in-flight <n>', 'requests of one user in flight at once'],
  ['perTenantInFlight', '--per-tenant-in-flight <n>', 'requests of one tenant in flight at once'],
  ['perUserSockets', '--per-user-sockets <n>', 'open WebSockets of one user per gateway process (past it the oldest is closed)'],
];

export function registerLimitsCommands(program: Command): void {
  const limits = program.command('limits').description('work limits: concurrency, pools, in-flight caps, sockets per user');

  limits
    .command('show')
    .description('print the limits in force')
    .action(async (_opts: object, cmd: Command) => {
      const view = await (await adminClientFor(cmd)).get<LimitsView>('limits');
      emit(outputOf(cmd), view, () => describeLimits(view));
    });

  const set = limits.command('set').description('change limits (validated by the server; running workers pick it up within seconds)');
  for (const [, flag, description] of FLAGS) set.option(flag, description, positiveInt);
  set.action(async (opts: Partial<Limits>, cmd: Command) => {
    const patch = definedFields(opts);
    if (Object.keys(patch).length === 0) {
      throw new UsageError(`limits set: give at least one of ${FLAGS.map(([, flag]) => flag.split(' ')[0]).join(', ')}`);
    }
    const view = await (await adminClientFor(cmd)).put<LimitsView>('limits', patch);
    emit(outputOf(cmd), view, () => `limits updated\n${describeLimits(view)}`);
  });
}

function describeLimits(view: LimitsView): string {
  return keyValues([
    ...FLAGS.map(([key, flag]): [string, number] => [flag.split(' ')[0]?.slice(2) ?? key, view.limits[key]]),
    ['version', view.version],
  ]);
}
