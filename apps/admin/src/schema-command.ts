/**
 * `schema migrate|status`: applies the CQL migrations (schema/) straight to the cluster. These
 * are the commands that talk to the database directly: they must work before any server runs.
 */
import { Command, Option } from 'commander';
import type { Client } from 'cassandra-driver';
import { CliError, EXIT, UnreachableError, UsageError } from './errors.ts';
import { outputOf } from './globals.ts';
import { emit, keyValues } from './output.ts';
import { ProgressBar } from './progress.ts';

interface ClusterOptions {
  contactPoints: string;
  keyspace: string;
  localDc: string;
  schemaDir?: string;
}

export function registerSchemaCommands(program: Command): void {
  const schema = program.command('schema').description('CQL schema of the distributed mode (talks to the cluster directly)');

  withCluster(schema.command('migrate'))
    .description('create the keyspace and apply pending migrations (idempotent; safe to run concurrently)')
    .option('--replication <spec>', 'for a new keyspace: "N" (SimpleStrategy, RF N) or "dc1:3,dc2:3" (NetworkTopologyStrategy)', '1')
    .action(async (opts: ClusterOptions & { replication: string }, cmd: Command) => {
      const replication = parseReplication(opts.replication);
      const store = await import('@seqline/store/scylla');
      const total = (await store.loadMigrations(opts.schemaDir)).length;
      await withClient(opts, async (client) => {
        const bar = new ProgressBar('migrating', total);
        let result;
        try {
          result = await store.migrateSchema(client, {
            keyspace: opts.keyspace,
            replication,
            ...(opts.schemaDir === undefined ? {} : { schemaDir: opts.schemaDir }),
            onProgress: (p) => (p.status === 'applying' ? bar.tick(`applying ${p.name}`, 0) : bar.tick(`${p.status} ${p.name}`)),
          });
        } finally {
          bar.finish();
        }
        emit(outputOf(cmd), result, () =>
          keyValues([
            ['keyspace', result.keyspace],
            ['applied', result.applied.length === 0 ? 'none (schema is up to date)' : result.applied.join(', ')],
            ['already applied', result.skipped.length],
          ]),
        );
      });
    });

  withCluster(schema.command('status'))
    .description('list applied and pending migrations')
    .action(async (opts: ClusterOptions, cmd: Command) => {
      const store = await import('@seqline/store/scylla');
      await withClient(opts, async (client) => {
        const status = await store.schemaStatus(client, opts.keyspace, opts.schemaDir);
        emit(outputOf(cmd), status, () =>
          keyValues([
            ['keyspace', status.keyspace],
            ['applied versions', status.applied.length === 0 ? 'none' : status.applied.join(', ')],
            ['pending', status.pending.length === 0 ? 'none' : status.pending.join(', ')],
          ]),
        );
      });
    });
}

function withCluster(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--contact-points <list>', 'comma-separated host[:port] of CQL nodes')
        .default('127.0.0.1:9042')
        .env('SCYLLA_CONTACT_POINTS'),
    )
    .addOption(new Option('--keyspace <name>', 'keyspace of the Seqline tables').default('seqline').env('SCYLLA_KEYSPACE'))
    .addOption(new Option('--local-dc <name>', 'the data center this client is in').default('datacenter1').env('SCYLLA_LOCAL_DC'))
    .addOption(new Option('--schema-dir <dir>', 'migrations directory (default: the schema/ shipped with Seqline)'))
    .addHelpText('after', '\nCredentials, when the cluster needs them: SCYLLA_USERNAME and SCYLLA_PASSWORD.');
}

async function withClient(opts: ClusterOptions, work: (client: Client) => Promise<void>): Promise<void> {
  const contactPoints = opts.contactPoints
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (contactPoints.length === 0) throw new UsageError('--contact-points: give at least one host[:port]');
  const { Client } = await import('cassandra-driver');
  const { SCYLLA_USERNAME: username, SCYLLA_PASSWORD: password } = process.env;
  const client = new Client({
    contactPoints,
    localDataCenter: opts.localDc,
    ...(username && password ? { credentials: { username, password } } : {}),
    socketOptions: { connectTimeout: 5_000, readTimeout: 60_000 },
  });
  try {
    try {
      await client.connect();
    } catch (err) {
      throw new UnreachableError(
        `cannot reach the CQL cluster at ${contactPoints.join(', ')}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    await work(client);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`schema: ${err instanceof Error ? err.message : String(err)}`, EXIT.failure);
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

function parseReplication(spec: string): Record<string, string | number> {
  if (/^\d+$/.test(spec) && Number(spec) > 0) return { class: 'SimpleStrategy', replication_factor: Number(spec) };
  const pairs = spec.split(',').map((p) => p.trim().split(':'));
  if (pairs.length > 0 && pairs.every((p) => p.length === 2 && /^[A-Za-z0-9_.-]+$/.test(p[0] ?? '') && /^\d+$/.test(p[1] ?? ''))) {
    return { class: 'NetworkTopologyStrategy', ...Object.fromEntries(pairs.map(([dc, n]) => [dc ?? '', Number(n)])) };
  }
  throw new UsageError(`--replication: "${spec}" is neither a replication factor nor dc:N[,dc:N]`);
}
