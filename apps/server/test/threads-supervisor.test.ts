/**
 * The threaded server's main thread (threads-supervisor.ts), in this process with two real
 * server threads on one LMDB environment: one thread is ended while sends to an inbox it owns
 * are in flight. Each send is answered (stored, or refused OVERLOADED so the client resends) or
 * its connection drops with the thread; none hangs. The thread is restarted, joins the mesh
 * again, and service resumes: every acknowledged send is in the inbox exactly once, and new
 * sends through either thread are stored. /metrics merges both threads. (Before torn-writes.ts,
 * an end inside a write transaction left a conversation record without its watermark — every
 * later append to the inbox refused — or an entry without its dedup row — a resend stored twice.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHARD_COUNT, inboxKey, shardOf, silentLogger } from '@seqline/core';
import { issueToken } from '@seqline/protocol';
import { loadServerConfig } from '../src/index.ts';
import { startThreadedServer, type ThreadedServer } from '../src/threads-supervisor.ts';
import { appinfo, SECRET, TestClient, waitFor } from './harness.ts';

const THREADS = 2;
let server: ThreadedServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'seqline-threads-'));
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: dataDir,
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
    SEQLINE_THREADS: String(THREADS),
    LOG_LEVEL: 'error',
  });
  // The threads load the TypeScript sources as this test does.
  server = await startThreadedServer(config, silentLogger, { execArgv: ['--conditions=source', '--import', 'tsx'] });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

/** A user whose inbox thread `thread` owns. */
function userOn(thread: number, prefix: string): string {
  for (let i = 0; ; i++)
    if (shardOf(inboxKey('default', `${prefix}${i}`), DEFAULT_SHARD_COUNT) % THREADS === thread) return `${prefix}${i}`;
}

type SendOutcome = 'stored' | 'OVERLOADED' | 'connection lost';

/** One send over HTTP: a new connection each, spread over the threads' sockets by the kernel. */
async function send(from: string, to: string, id: string): Promise<SendOutcome> {
  const token = await issueToken({ secret: SECRET, user: from, tenant: 'default', ttlSeconds: 60 });
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appinfo: id, to: { user: to }, type: 'text', body: { text: id } }),
    });
    const body = (await res.json()) as { error?: { code?: string } };
    if (res.status === 200) return 'stored';
    return body.error?.code === 'OVERLOADED' ? 'OVERLOADED' : (`unexpected ${res.status} ${JSON.stringify(body)}` as SendOutcome);
  } catch {
    return 'connection lost';
  }
}

describe('threads supervisor', () => {
  it('a thread ended mid-burst: its requests settle typed, it is restarted, and nothing acknowledged is lost', async () => {
    const bob = userOn(0, 'sup-bob');
    const alice = userOn(1, 'sup-alice');
    expect(await send(alice, bob, appinfo())).toBe('stored');

    // One sender each (a user's requests in flight are bounded), on both threads' inboxes.
    const ids = Array.from({ length: 400 }, () => appinfo());
    const senderOf = (i: number): string => `sup-sender${i}`;
    // Thread 0 owns bob's inbox and bound the port first: both must come back. It ends mid-burst,
    // at the 20th answer (a later poll may find the burst over), most likely inside a write
    // transaction: what that tore is rolled back before it restarts (torn-writes.ts).
    let settled = 0;
    let ended: Promise<number> | undefined;
    const endThread0 = (): void => {
      if (++settled === 20) ended = server.worker(0).terminate();
    };
    const burst = ids.map((id, i) => send(senderOf(i), bob, id).finally(endThread0));
    const outcomes = await Promise.all(burst);
    await ended;
    expect(outcomes.filter((o) => !['stored', 'OVERLOADED', 'connection lost'].includes(o))).toEqual([]);
    const tally = Object.fromEntries(['stored', 'OVERLOADED', 'connection lost'].map((o) => [o, outcomes.filter((x) => x === o).length]));
    console.log(`threads supervisor: burst outcomes while thread 0 ended: ${JSON.stringify(tally)}`);
    expect(tally['OVERLOADED']! + tally['connection lost']!, 'the thread ended mid-burst').toBeGreaterThan(0);

    await server.restarted(0, 1);
    // Resent as a client would: the stored ones answer duplicate, the others are stored now.
    for (const [i, id] of ids.entries()) if (outcomes[i] !== 'stored') expect(await send(senderOf(i), bob, id)).toBe('stored');
    const after = appinfo();
    expect(await send(alice, bob, after)).toBe('stored');

    const reader = await TestClient.connect(`ws://127.0.0.1:${server.port}/v1/ws`, bob);
    try {
      const inbox = await waitFor(async () => {
        const all = await reader.syncAll();
        return all.some((e) => e.appinfo === after) ? all : undefined;
      });
      const appinfos = inbox.map((e) => e.appinfo);
      expect(new Set(appinfos).size).toBe(appinfos.length);
      expect(ids.filter((id) => !appinfos.includes(id))).toEqual([]);
      expect(inbox.every((e, i) => i === 0 || e.seq > inbox[i - 1]!.seq)).toBe(true);
    } finally {
      reader.close();
    }
  }, 60_000);

  it('/metrics answers for every thread, whichever gets the request', async () => {
    const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    // Each thread holds its share of the bound; merged, the process's.
    expect(text).toContain('seqline_bound_limit{bound="SEQLINE_MAX_CACHED_INBOXES"} 100000');
  });
});
