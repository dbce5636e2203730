/** `tiers show|set`: group size thresholds (small / large / huge) and hysteresis. */
import type { Command } from 'commander';
import { shrinkBelow, type TierThresholds } from '@seqline/core';
import { UsageError } from './errors.ts';
import { adminClientFor, outputOf } from './globals.ts';
import { definedFields, fraction, positiveInt } from './numbers.ts';
import { emit, keyValues } from './output.ts';

interface TiersView {
  tiers: TierThresholds;
  version: number;
}

export function registerTiersCommands(program: Command): void {
  const tiers = program.command('tiers').description('tier thresholds: when a group is small, large or huge');

  tiers
    .command('show')
    .description('print the thresholds in force')
    .action(async (_opts: object, cmd: Command) => {
      const view = await (await adminClientFor(cmd)).get<TiersView>('tiers');
      emit(outputOf(cmd), view, () => describeTiers(view));
    });

  tiers
    .command('set')
    .description('change thresholds (validated by the server; running workers pick it up within seconds)')
    .option('--small-below <n>', 'a group with fewer members is small', positiveInt)
    .option('--large-below <n>', 'a group with fewer members (and not small) is large; else huge', positiveInt)
    .option('--max-members <n>', 'no group may have more members (at most 100000)', positiveInt)
    .option('--hysteresis <f>', 'fraction below a threshold a shrinking group must fall to move down, in [0, 1)', fraction)
    .action(async (opts: { smallBelow?: number; largeBelow?: number; maxMembers?: number; hysteresis?: number }, cmd: Command) => {
      const patch = definedFields(opts);
      if (Object.keys(patch).length === 0) {
        throw new UsageError('tiers set: give at least one of --small-below, --large-below, --max-members, --hysteresis');
      }
      const view = await (await adminClientFor(cmd)).put<TiersView>('tiers', patch);
      emit(outputOf(cmd), view, () => `tiers updated\n${describeTiers(view)}`);
    });
}

function describeTiers(view: TiersView): string {
  const t = view.tiers;
  return keyValues([
    ['small', `< ${t.smallBelow} members`],
    ['large', `< ${t.largeBelow} members`],
    ['huge', `up to ${t.maxMembers} members`],
    [
      'hysteresis',
      `${t.hysteresis} (a shrinking group moves down below ${shrinkBelow(t.smallBelow, t.hysteresis)} / ${shrinkBelow(t.largeBelow, t.hysteresis)})`,
    ],
    ['version', view.version],
  ]);
}
