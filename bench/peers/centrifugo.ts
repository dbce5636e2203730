/**
 * Centrifugo v6 as a peer: built from the Go module proxy into `.bench/peers/bin` (git-ignored),
 * run with its Redis engine (a private redis-server with AOF on, its own port and data dir —
 * never the shared one) or its memory engine. Users get a personal channel (`personal:#<user>`,
 * a server-side subscription made at connect) with history and recovery; groups are channels
 * the members subscribe to. Messages are published by the sender's own client over its socket,
 * as Seqline's `send` is.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { freePort, mapLimited, tempDir } from '../support.ts';
import { CentrifugoClient, centrifugoToken } from './centrifugo-client.ts';
import type { PeersOptions } from './options.ts';
import { answers200, startService, type Service } from './processes.ts';
import type { CatchUpMark, CatchUpResult, PeerClient, PeerSystem } from './system.ts';

export const CENTRIFUGO_MODULE = 'github.com/centrifugal/centrifugo/v6';
export const CENTRIFUGO_VERSION = '6.9.1';
const BIN_DIR = fileURLToPath(new URL('../../.bench/peers/bin', import.meta.url));
const BINARY = join(BIN_DIR, 'centrifugo');
const SECRET = 'peers-bench-centrifugo-secret-0123456789';

function goCommand(): string {
  const fromEnv = process.env['BENCH_PEERS_GO'];
  if (fromEnv) return fromEnv;
  return spawnSync('go', ['version']).status === 0 ? 'go' : '/usr/local/go/bin/go';
}

/** The binary of the pinned version, built with `go install` when missing or another version. */
export function ensureCentrifugo(): string {
  const version = () => spawnSync(BINARY, ['version'], { encoding: 'utf8' }).stdout ?? '';
  if (existsSync(BINARY) && version().includes(`v${CENTRIFUGO_VERSION} `)) return BINARY;
  const built = spawnSync(
    goCommand(),
    [
      'install',
      '-ldflags',
      `-X ${CENTRIFUGO_MODULE}/internal/build.Version=${CENTRIFUGO_VERSION}`,
      `${CENTRIFUGO_MODULE}@v${CENTRIFUGO_VERSION}`,
    ],
    { env: { ...process.env, GOBIN: BIN_DIR, GOFLAGS: '-mod=mod' }, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] },
  );
  if (built.status !== 0) throw new Error(`building Centrifugo ${CENTRIFUGO_VERSION} failed: ${built.stderr?.slice(-2000)}`);
  if (!version().includes(`v${CENTRIFUGO_VERSION} `)) throw new Error(`built Centrifugo reports "${version().trim()}"`);
  return BINARY;
}

export type CentrifugoEngine = 'redis' | 'memory';

function config(port: number, engine: CentrifugoEngine, redisPort: number | undefined, o: PeersOptions): object {
  return {
    http_server: { address: '127.0.0.1', port },
    log: { level: 'warn' },
    engine: {
      type: engine,
      ...(engine === 'redis' ? { redis: { address: [`redis://127.0.0.1:${redisPort}`], prefix: 'peers' } } : {}),
    },
    client: {
      token: { hmac_secret_key: SECRET },
      subscribe_to_user_personal_channel: { enabled: true, personal_channel_namespace: 'personal' },
      // The catch-up comes back in the connect reply in one piece: the best case for Centrifugo.
      recovery_max_publication_limit: o.catchUp,
      queue_max_size: 64 * 1024 * 1024,
    },
    channel: {
      namespaces: [
        {
          name: 'personal',
          history_size: Math.max(o.catchUp, 10_000),
          history_ttl: '24h',
          force_recovery: true,
          allow_publish_for_client: true,
        },
        { name: 'group', history_size: 100, history_ttl: '24h', allow_subscribe_for_client: true, allow_publish_for_subscriber: true },
      ],
    },
    http_api: { key: SECRET },
    health: { enabled: true },
    usage_stats: { disabled: true },
  };
}

async function startRedis(dir: string, fsync: PeersOptions['redisFsync']): Promise<{ service: Service; port: number }> {
  const port = await freePort();
  const service = await startService({
    label: 'redis-server (Centrifugo)',
    command: 'redis-server',
    // AOF on, no RDB snapshots (a fork mid-run would be noise); `appendfsync` per BENCH_PEERS_REDIS_FSYNC.
    args: ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', fsync, '--save', ''],
    readyText: 'Ready to accept connections',
  });
  return { service, port };
}

export async function startCentrifugo(engine: CentrifugoEngine, o: PeersOptions): Promise<PeerSystem> {
  const binary = ensureCentrifugo();
  const tmp = await tempDir(`peers-centrifugo-${engine}`);
  const started: Service[] = [];
  try {
    const redis = engine === 'redis' ? await startRedis(tmp.dir, o.redisFsync) : undefined;
    if (redis) started.push(redis.service);
    const port = await freePort();
    const configFile = join(tmp.dir, 'config.json');
    await writeFile(configFile, JSON.stringify(config(port, engine, redis?.port, o), null, 2));
    const server = await startService({
      label: `centrifugo (${engine})`,
      command: binary,
      args: ['-c', configFile],
      probe: () => answers200(`http://127.0.0.1:${port}/health`),
    });
    started.push(server);
    return new CentrifugoSystem(engine, server, redis?.service, `ws://127.0.0.1:${port}/connection/websocket`, o, async () => {
      for (const s of [...started].reverse()) await s.stop();
      await tmp.remove();
    });
  } catch (err) {
    for (const s of started.reverse()) await s.stop();
    await tmp.remove();
    throw err;
  }
}

class CentrifugoSystem implements PeerSystem {
  readonly key;
  readonly label;
  readonly processes;
  readonly stores;
  readonly setup: string[];
  private readonly tokens = new Map<string, string>();

  constructor(
    engine: CentrifugoEngine,
    server: Service,
    redis: Service | undefined,
    private readonly url: string,
    o: PeersOptions,
    readonly stop: () => Promise<void>,
  ) {
    this.key = engine === 'redis' ? ('centrifugo-redis' as const) : ('centrifugo-memory' as const);
    this.label = engine === 'redis' ? 'Centrifugo (Redis)' : 'Centrifugo (memory)';
    this.processes = [{ label: 'centrifugo', pid: server.pid }];
    this.stores = redis ? [{ label: 'redis-server (private)', pid: redis.pid, shared: false }] : [];
    this.setup = [
      `Centrifugo ${CENTRIFUGO_VERSION} (go install from the module proxy), ${engine} engine` +
        (engine === 'redis' ? `: a private redis-server, AOF on with appendfsync ${o.redisFsync}, no RDB snapshots` : ''),
      `  personal channel per user (server-side subscription at connect), history ${Math.max(o.catchUp, 10_000)} messages / 24 h, recovery forced; sender publishes over its own socket (client publish)`,
      '  groups: a channel every member subscribes to (history 100 / 24 h), the sender publishes to it',
    ];
  }

  private token(user: string): string {
    let token = this.tokens.get(user);
    if (token === undefined) this.tokens.set(user, (token = centrifugoToken(SECRET, user)));
    return token;
  }

  async connect(user: string): Promise<PeerClient> {
    return (await CentrifugoClient.connect(this.url, this.token(user))).client;
  }

  async formGroup(group: string, _users: string[], clients: PeerClient[]): Promise<string | undefined> {
    await mapLimited(clients, 200, async (c) => {
      if (!(c instanceof CentrifugoClient)) throw new Error('formGroup: not a Centrifugo client');
      await c.subscribe(`group:${group}`);
    });
    return undefined;
  }

  async mark(user: string): Promise<CatchUpMark> {
    const channel = `personal:#${user}`;
    const { client, result } = await CentrifugoClient.connect(this.url, this.token(user));
    await client.close();
    const sub = result.subs?.[channel];
    if (!sub?.recoverable || sub.epoch === undefined) throw new Error(`${channel}: not recoverable (${JSON.stringify(sub)})`);
    return { kind: 'stream', channel, offset: sub.offset ?? 0, epoch: sub.epoch };
  }

  async catchUp(user: string, mark: CatchUpMark): Promise<CatchUpResult> {
    if (mark.kind !== 'stream') throw new Error('catchUp: not a Centrifugo mark');
    const t0 = performance.now();
    const { client, result, at } = await CentrifugoClient.connect(this.url, this.token(user), {
      [mark.channel]: { recover: true, offset: mark.offset, epoch: mark.epoch },
    });
    await client.close();
    const sub = result.subs?.[mark.channel];
    if (sub?.recovered !== true) throw new Error(`${mark.channel}: not recovered (${JSON.stringify(sub).slice(0, 300)})`);
    return { messages: sub.publications?.length ?? 0, ms: at - t0, roundTrips: 1 };
  }
}
