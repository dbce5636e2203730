import { Command } from 'commander';
import { resolve } from 'node:path';
import { issueToken, loadOrCreateSecret, parseTtl } from '@seqline/protocol';

/** `token issue`: signs a client token with the same secret the server uses. */
export function tokenCommand(): Command {
  const token = new Command('token').description('client tokens (JWT HS256)');
  token.command('issue')
    .description('print a token for a user')
    .requiredOption('--user <id>', 'user id (the token subject)')
    .option('--tenant <id>', 'tenant id', 'default')
    .option('--ttl <duration>', 'lifetime, e.g. 30m, 24h, 7d', '24h')
    .option('--data-dir <dir>', 'server data dir holding the secret when SEQLINE_SECRET is unset', process.env.SEQLINE_DATA_DIR ?? './data')
    .option('--json', 'print {"token", "expiresAt"} as JSON')
    .action(async (opts: { user: string; tenant: string; ttl: string; dataDir: string; json?: boolean }) => {
      const ttlSeconds = parseTtl(opts.ttl);
      const secret = process.env.SEQLINE_SECRET ?? await loadOrCreateSecret(resolve(opts.dataDir));
      const jwt = await issueToken({ secret, user: opts.user, tenant: opts.tenant, ttlSeconds });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ token: jwt, expiresAt: Date.now() + ttlSeconds * 1000 })}\n`);
      } else {
        process.stdout.write(`${jwt}\n`);
      }
    });
  return token;
}
