/** seqline-admin: operator CLI. Exit codes: 0 ok, 1 failure, 2 usage error. */
import { Command, CommanderError } from 'commander';
import { tokenCommand } from './token-command.ts';

const program = new Command('seqline-admin')
  .description('Seqline operator CLI')
  .showHelpAfterError()
  .exitOverride();
program.addCommand(tokenCommand());

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  process.stderr.write(`seqline-admin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
