/**
 * Options every command accepts, and what they resolve to: where the server is, how to prove
 * we are an admin, and how to print.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { issueAdminToken } from '@seqline/protocol';
import { AdminClient } from './admin-client.ts';
import { UsageError } from './errors.ts';
import { positiveInt } from './numbers.ts';
import { stdoutOutput, type Output } from './output.ts';

export interface GlobalOptions {
  url: string;
  dataDir: string;
  adminToken?: string;
  json?: boolean;
  timeout: number;
}

/** A minted admin token lives this long: long enough for a replay of many dead letters. */
const MINTED_TOKEN_TTL_SECONDS = 15 * 60;

export function addGlobalOptions(program: Command): Command {
  return program
    .addOption(new Option('--url <url>', 'base URL of a running server (admin API)').default('http://127.0.0.1:8080').env('SEQLINE_URL'))
    .addOption(
      new Option('--data-dir <dir>', 'server data dir whose secret signs tokens (when SEQLINE_SECRET is unset)')
        .default('./data')
        .env('SEQLINE_DATA_DIR'),
    )
    .addOption(new Option('--admin-token <jwt>', 'use this admin token instead of minting one').env('SEQLINE_ADMIN_TOKEN'))
    .option('--json', 'print JSON (for scripts) instead of tables')
    .addOption(new Option('--timeout <ms>', 'HTTP request timeout in ms').default(10_000).argParser(positiveInt));
}

export function globalsOf(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

export function outputOf(cmd: Command): Output {
  return stdoutOutput(globalsOf(cmd).json === true);
}

/** The secret the server signs tokens with: SEQLINE_SECRET, else `<data-dir>/secret` (never created here). */
export async function readServerSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.SEQLINE_SECRET) return env.SEQLINE_SECRET;
  const file = join(resolve(dataDir), 'secret');
  try {
    const secret = (await readFile(file, 'utf8')).trim();
    if (secret !== '') return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  throw new UsageError(
    `no admin credentials: ${file} does not exist. Pass --data-dir (the server's SEQLINE_DATA_DIR), ` +
      'set SEQLINE_SECRET, or pass --admin-token / SEQLINE_ADMIN_TOKEN (seqline-admin token issue --admin)',
  );
}

/** A client for the admin API, with a token given or minted from the server's secret. */
export async function adminClientFor(cmd: Command): Promise<AdminClient> {
  const g = globalsOf(cmd);
  const token =
    g.adminToken ??
    (await issueAdminToken({
      secret: await readServerSecret(g.dataDir),
      name: 'seqline-admin',
      ttlSeconds: MINTED_TOKEN_TTL_SECONDS,
    }));
  return new AdminClient(g.url, token, g.timeout);
}
