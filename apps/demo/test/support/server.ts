/**
 * A real embedded server for the browser suite, in-process: the demo built into a temp folder,
 * browsers allowed from the demo's own origin and the SDK page's (SEQLINE_ALLOWED_ORIGINS), unless
 * `env` says otherwise (a variable given as undefined is left unset).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@seqline/core';
import { issueAdminToken, issueToken } from '@seqline/protocol';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '../../../server/src/index.ts';
import { freePort } from '../../../server/test/child-server.ts';
import { buildDemo } from '../../build.ts';

export const SECRET = 'browser-suite-secret-0123456789';

export interface DemoServer {
  server: RunningServer;
  port: number;
  /** The demo's origin, allowed: http://127.0.0.1:PORT */
  origin: string;
  /** A free port whose origin (http://127.0.0.1:PORT) is allowed too: the SDK test page's. */
  sdkPagePort: number;
  token(user: string): Promise<string>;
  /** Sets the default tenant's login policy live through the admin API (null: back to the default). */
  loginPolicy(policy: 'all' | 'one-per-platform' | 'one' | null): Promise<void>;
  /** The user's inbox through the HTTP API (every page of it). */
  inbox(user: string): Promise<Array<{ seq: number; kind: string; appinfo: string; from: string; body?: unknown }>>;
  stop(): Promise<void>;
}

export async function startDemoServer(env: Record<string, string | undefined> = {}): Promise<DemoServer> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-browser-'));
  const demoDir = await buildDemo(join(dir, 'demo'));
  const [port, sdkPagePort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${port}`;
  const config = await loadServerConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: join(dir, 'data'),
    SEQLINE_SECRET: SECRET,
    SEQLINE_DEMO_DIR: demoDir,
    SEQLINE_ALLOWED_ORIGINS: `${origin},http://127.0.0.1:${sdkPagePort}`,
    SEQLINE_RATE_PER_SEC: '10000',
    SEQLINE_RATE_BURST: '10000',
    ...env,
  });
  const server = await startEmbeddedServer(config, silentLogger);
  const token = (user: string) => issueToken({ secret: SECRET, user, ttlSeconds: 600 });
  return {
    server,
    port,
    origin,
    sdkPagePort,
    token,
    async loginPolicy(policy) {
      const admin = await issueAdminToken({ secret: SECRET, name: 'browser-suite', ttlSeconds: 600 });
      const res = await fetch(`${origin}/v1/admin/hooks/default`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ loginPolicy: policy }),
      });
      if (!res.ok) throw new Error(`admin hooks PUT: ${res.status} ${await res.text()}`);
    },
    async inbox(user) {
      const auth = { authorization: `Bearer ${await token(user)}` };
      const out: Array<{ seq: number; kind: string; appinfo: string; from: string; body?: unknown }> = [];
      for (let maxSeq = 0; ;) {
        const page = (await (await fetch(`${origin}/v1/sync?maxSeq=${maxSeq}&limit=1000`, { headers: auth })).json()) as {
          entries: typeof out;
          hasMore: boolean;
        };
        out.push(...page.entries);
        maxSeq = page.entries.at(-1)?.seq ?? maxSeq;
        if (!page.hasMore) return out;
      }
    },
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
