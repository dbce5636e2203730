/** `token issue`: signs a client or admin token with the server's secret; needs no running server. */
import { Command } from 'commander';
import { resolve } from 'node:path';
import { issueAdminToken, issueToken, loadOrCreateSecret, parseTtl } from '@seqline/protocol';
import { UsageError } from './errors.ts';
import { globalsOf, outputOf } from './globals.ts';
import { emit } from './output.ts';

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('tokens (JWT HS256, signed with the server secret)');
  token
    .command('issue')
    .description('print a token for a user, or an admin token with --admin')
    .option('--user <id>', 'user id (the token subject)')
    .option('--tenant <id>', 'tenant id', 'default')
    .option('--admin', 'an admin token (for the admin API) instead of a user token')
    .option('--name <id>', 'operator name recorded in an admin token', 'operator')
    .option('--ttl <duration>', 'lifetime, e.g. 30m, 24h, 7d', '24h')
    .addHelpText('after', '\nThe secret is SEQLINE_SECRET, else <data-dir>/secret (created when missing, as the server does).')
    .action(async (opts: { user?: string; tenant: string; admin?: boolean; name: string; ttl: string }, cmd: Command) => {
      if (opts.admin === true && opts.user !== undefined) throw new UsageError('token issue: --user and --admin exclude each other');
      if (opts.admin !== true && opts.user === undefined)
        throw new UsageError("token issue: required option '--user <id>' not specified (or --admin)");
      const ttlSeconds = parseTtl(opts.ttl);
      const secret = process.env.SEQLINE_SECRET ?? (await loadOrCreateSecret(resolve(globalsOf(cmd).dataDir)));
      const jwt =
        opts.admin === true
          ? await issueAdminToken({ secret, name: opts.name, ttlSeconds })
          : await issueToken({ secret, user: opts.user ?? '', tenant: opts.tenant, ttlSeconds });
      emit(outputOf(cmd), { token: jwt, expiresAt: Date.now() + ttlSeconds * 1000 }, () => jwt);
    });
}
