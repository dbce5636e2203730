/**
 * The system a round runs against, embedded (one server process on LMDB) or distributed
 * (worker and gateway processes on the shared services), as the rest of the campaign sees it:
 * where clients connect, the admin API, whose clock is where, and the faults it can take.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { issueAdminToken, issueToken } from '@seqline/protocol';
import { SECRET } from '../../../apps/server/test/harness.ts';

export type Mode = 'embedded' | 'distributed';

export interface SystemUnderTest {
  readonly mode: Mode;
  readonly tenant: string;
  /** Base socket URLs (`ws://127.0.0.1:port`) of every gateway, alive or not. */
  wsBases(): string[];
  /** An HTTP base of a gateway that is up now. */
  httpBase(): string;
  /** The shard of a user's inbox, when the system has shards that processes own. */
  userShard(user: string): number | undefined;
  /** Every process is up and serving (after faults): resolves when it is, or throws after the bound. */
  healthy(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export const CLOCK_PRELOAD = pathToFileURL(new URL('./clock-jump.mjs', import.meta.url).pathname).href;

/**
 * Clock offsets of the processes under test, written where the preload reads them. The world
 * offset is simulated time that passed for everyone (the hook receiver and the tokens too);
 * a process's own jump comes on top of it.
 */
export class Clocks {
  world = 0;
  private readonly jumps = new Map<string, number>();
  constructor(readonly dir: string) {}

  static async create(dir: string): Promise<Clocks> {
    await mkdir(dir, { recursive: true });
    return new Clocks(dir);
  }

  /** Date.now as the world sees it now. */
  wallClock(): number {
    return Date.now() + this.world;
  }

  async set(owner: string, jumpMs: number): Promise<void> {
    this.jumps.set(owner, jumpMs);
    await this.write(owner);
  }

  async advanceWorld(ms: number, owners: readonly string[]): Promise<void> {
    this.world += ms;
    for (const o of owners) await this.write(o);
  }

  /**
   * Written whole, by a rename: the preload re-reads the file every 50 ms, and a read that met a
   * half-written file took offset 0 for that while (31 simulated minutes back after an outage:
   * hook signatures it made looked stale).
   */
  async write(owner: string): Promise<void> {
    const file = join(this.dir, `${owner}.offset`);
    await writeFile(`${file}.tmp`, String(this.world + (this.jumps.get(owner) ?? 0)));
    await rename(`${file}.tmp`, file);
  }

  env(): Record<string, string> {
    const prior = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
    return { SEQLINE_CAMPAIGN_CLOCK_DIR: this.dir, NODE_OPTIONS: `${prior}--import=${CLOCK_PRELOAD}` };
  }
}

export async function userToken(tenant: string, user: string, wallClock: () => number): Promise<string> {
  return issueToken({ secret: SECRET, user, tenant, ttlSeconds: 3600, now: wallClock() });
}

/** Calls the admin API of a gateway (or the embedded server). */
export async function admin(
  sys: SystemUnderTest,
  clocks: Clocks,
  method: 'GET' | 'PUT' | 'POST',
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const token = await issueAdminToken({ secret: SECRET, name: 'campaign', ttlSeconds: 600, now: clocks.wallClock() });
  const res = await fetch(`${sys.httpBase()}/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok || json.ok !== true) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}
