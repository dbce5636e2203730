/** `deadletters list|replay`: fanout jobs that failed past their retry budget (I4). */
import type { Command } from 'commander';
import { CliError, EXIT, ServerError, UsageError } from './errors.ts';
import { adminClientFor, outputOf } from './globals.ts';
import { emit, isoTime, oneLine, table } from './output.ts';
import { ProgressBar } from './progress.ts';

interface DeadLetter {
  id: string;
  queue: string;
  attempts: number;
  createdAt: number;
  lastError?: string;
}
interface ReplayResult {
  replayed: string[];
  missing: string[];
}

export function registerDeadLetterCommands(program: Command): void {
  const dead = program.command('deadletters').description('jobs that kept failing: list them, replay them');

  dead
    .command('list')
    .description('list dead letters, oldest first')
    .option('--queue <name>', 'only this queue (e.g. fanout.small, hooks.notify, hooks.after-send)')
    .action(async (opts: { queue?: string }, cmd: Command) => {
      const all = (await (await adminClientFor(cmd)).get<{ deadLetters: DeadLetter[] }>('deadletters')).deadLetters;
      const deadLetters = opts.queue === undefined ? all : all.filter((d) => d.queue === opts.queue);
      emit(outputOf(cmd), deadLetters, () =>
        deadLetters.length === 0
          ? 'no dead letters'
          : table(
              ['id', 'queue', 'attempts', 'created', 'last error'],
              deadLetters.map((d) => [d.id, d.queue, d.attempts, isoTime(d.createdAt), oneLine(d.lastError ?? '', 80)]),
            ),
      );
    });

  dead
    .command('replay')
    .description('put dead letters back on their queue with a fresh retry budget')
    .argument('[id]', 'the dead letter to replay')
    .option('--all', 'replay every dead letter')
    .action(async (id: string | undefined, opts: { all?: boolean }, cmd: Command) => {
      if ((id === undefined) === (opts.all !== true)) throw new UsageError('deadletters replay: give either an ID or --all');
      const client = await adminClientFor(cmd);
      const ids = id !== undefined ? [id] : (await client.get<{ deadLetters: DeadLetter[] }>('deadletters')).deadLetters.map((d) => d.id);
      // One request per job: the bar shows real progress, and a failure names its job.
      const result: ReplayResult = { replayed: [], missing: [] };
      const bar = new ProgressBar('replaying', ids.length);
      try {
        for (const one of ids) {
          try {
            await client.post(`deadletters/${encodeURIComponent(one)}/replay`);
            result.replayed.push(one);
          } catch (err) {
            if (!(err instanceof ServerError && err.status === 404)) throw err;
            result.missing.push(one); // replayed meanwhile by someone else
          }
          bar.tick(one);
        }
      } finally {
        bar.finish();
      }
      if (id !== undefined && result.missing.length > 0) throw new CliError(`no dead letter ${id}`, EXIT.failure);
      emit(
        outputOf(cmd),
        result,
        () =>
          `replayed ${result.replayed.length} dead letter(s)` +
          (result.missing.length > 0 ? `; ${result.missing.length} were already gone` : ''),
      );
    });
}
