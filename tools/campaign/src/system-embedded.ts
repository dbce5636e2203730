/**
 * The embedded server as the system under test: one child process (apps/server, LMDB in a
 * temporary directory of its own), with the clock preload, the hook URLs and a port of its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildServer, freePort } from '../../../apps/server/test/child-server.ts';
import type { Clocks, SystemUnderTest } from './system.ts';

export class EmbeddedSystem implements SystemUnderTest {
  readonly mode = 'embedded' as const;
  /** Serializes what restarts the one process: two faults never kill it at once. */
  busy = false;

  private constructor(
    readonly server: ChildServer,
    readonly dataDir: string,
    readonly tenant: string,
  ) {}

  static async start(tenant: string, clocks: Clocks, hookEnv: Record<string, string>): Promise<EmbeddedSystem> {
    const dataDir = await mkdtemp(join(tmpdir(), 'seqline-campaign-'));
    const server = new ChildServer(await freePort(), dataDir, { ...clocks.env(), ...hookEnv });
    await clocks.write('server');
    await server.start();
    return new EmbeddedSystem(server, dataDir, tenant);
  }

  wsBases(): string[] {
    return [`ws://127.0.0.1:${this.server.port}`];
  }

  httpBase(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  userShard(): number | undefined {
    return undefined;
  }

  async healthy(): Promise<void> {
    // start() resolved once the server said it listens; a kill fault restarts it before returning.
  }

  /** kill -9, then start again (the restart is part of the fault). */
  async killAndRestart(downMs: number): Promise<void> {
    await this.server.kill9();
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.server.start();
  }

  async close(): Promise<void> {
    await this.server.terminate().catch(() => undefined);
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
