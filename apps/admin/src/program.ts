/** The seqline-admin command tree, and how any failure becomes a message and an exit code. */
import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { SeqlineError } from '@seqline/core';
import { registerConversationsCommands } from './conversations-command.ts';
import { registerDeadLetterCommands } from './deadletters-command.ts';
import { registerDevicesCommand } from './devices-command.ts';
import { CliError, EXIT, type ExitCode } from './errors.ts';
import { addGlobalOptions } from './globals.ts';
import { registerGroupCommands } from './group-command.ts';
import { registerHooksCommands } from './hooks-command.ts';
import { registerInboxCommand } from './inbox-command.ts';
import { registerLimitsCommands } from './limits-command.ts';
import { registerSchemaCommands } from './schema-command.ts';
import { registerTiersCommands } from './tiers-command.ts';
import { registerTokenCommands } from './token-command.ts';

const EXIT_HELP = `
Exit codes: 0 ok, 1 failure, 2 usage error (bad flags or values the server rejected),
3 cannot reach the server (or, for schema, the CQL cluster).
Every command but "token" and "schema" talks to a running server's admin API (--url).`;

/** `output` replaces where commander writes help and usage errors (tests capture it). */
export function buildProgram(output?: OutputConfiguration): Command {
  const program = new Command('seqline-admin');
  // Before any subcommand exists: subcommands copy these settings when they are created.
  if (output) program.configureOutput(output);
  program
    .description('Seqline operator CLI: live settings, groups, inboxes, conversation indexes, dead letters, tokens, schema')
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .addHelpText('after', EXIT_HELP);
  addGlobalOptions(program);
  registerTiersCommands(program);
  registerLimitsCommands(program);
  registerGroupCommands(program);
  registerInboxCommand(program);
  registerDevicesCommand(program);
  registerConversationsCommands(program);
  registerHooksCommands(program);
  registerDeadLetterCommands(program);
  registerTokenCommands(program);
  registerSchemaCommands(program);
  return program;
}

/** Runs the CLI; resolves with the exit code (messages already written to stderr). */
export async function runCli(argv: string[]): Promise<ExitCode> {
  try {
    await buildProgram().parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    // Commander printed its own message (or the help) already.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    process.stderr.write(`seqline-admin: ${messageOf(err)}\n`);
    return exitCodeOf(err);
  }
}

function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof SeqlineError && err.code === 'BAD_REQUEST') return EXIT.usage;
  return EXIT.failure;
}

function messageOf(err: unknown): string {
  if (err instanceof CliError || err instanceof SeqlineError) return err.message;
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
