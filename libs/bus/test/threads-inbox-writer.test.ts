/**
 * The InboxWriter contract over threads: two real worker threads, each owning half of the inbox
 * shards with its InboxOwner on the one LMDB environment, and this thread writing through its
 * ThreadInboxWriter (it owns no shard) and reading the same environment. A follow-up whose inbox
 * lives on the other owner thread goes there from the first one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey, OverloadedError, silentLogger, type InboxKey, type NewEntry } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { inboxWriterContract, uniqueTenant } from '@seqline/testing';
import { ThreadInboxWriter, ThreadUnavailableError } from '../src/threads.ts';
import { meshWithThreads } from './threads-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-thread-writer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const SHARDS = 8;
const THREADS = 2;

/** Two owner threads (0, 1) and this thread (2) on one environment in `dir`. */
async function ownersAndClient(dir: string) {
  const engine = await openEmbeddedEngine({ dir });
  const { hub, threads } = meshWithThreads(THREADS + 1, 'thread-inbox-owner.ts', () => ({ dir, threads: THREADS, shardCount: SHARDS }));
  const writer = new ThreadInboxWriter({ hub, threads: THREADS, shardCount: SHARDS, logger: silentLogger });
  const ctl = hub.open('ctl', {});
  return {
    engine,
    hub,
    threads,
    writer,
    ctl,
    /** Each owner thread stops in order (answering what it serves), then this side closes. */
    close: async () => {
      await writer.close();
      await Promise.all(threads.map((_, i) => ctl.request(i, { op: 'stop' }).catch(() => 'gone')));
      expect(await Promise.all(threads.map((t) => t.exited))).toEqual(threads.map(() => 0));
      await hub.close();
      await engine.close();
    },
  };
}

inboxWriterContract(`ThreadInboxWriter → ${THREADS} owner threads on one LMDB environment`, async (dataKey) => {
  const rig = await ownersAndClient(join(root, dataKey));
  return { store: { writer: rig.writer, timeline: rig.engine.timeline }, close: rig.close };
});

const entry = (appinfo: string): NewEntry => ({
  kind: 'msg',
  appinfo,
  from: 'bob',
  sendTime: 1_700_000_000_000,
  type: 'text',
  body: { text: appinfo },
  conv: { type: 'user', id: 'bob' },
});

describe('thread inbox writer', () => {
  it('writes reach the owner of their shard: both threads take some, and each inbox stays on one', async () => {
    const rig = await ownersAndClient(join(root, 'spread'));
    try {
      const tenant = uniqueTenant();
      const inboxes = Array.from({ length: 16 }, (_, i) => inboxKey(tenant, `u${i}`));
      const byThread = new Set(inboxes.map((inbox) => rig.writer.threadOf(inbox)));
      expect(byThread).toEqual(new Set([0, 1]));
      for (const inbox of inboxes) {
        const [a, b] = [
          await rig.writer.append({ inbox, entries: [entry('m1')] }),
          await rig.writer.append({ inbox, entries: [entry('m2')] }),
        ];
        expect(b[0]!.seq).toBeGreaterThan(a[0]!.seq);
        expect(await rig.writer.headSeq(inbox)).toBe(b[0]!.seq);
      }
    } finally {
      await rig.close();
    }
  });

  it('a write to an owner thread that died fails OVERLOADED at once, in flight or after; the other owner keeps writing', async () => {
    const rig = await ownersAndClient(join(root, 'dead'));
    const tenant = uniqueTenant();
    const on = (thread: number): InboxKey => {
      for (let i = 0; ; i++) if (rig.writer.threadOf(inboxKey(tenant, `u${i}`)) === thread) return inboxKey(tenant, `u${i}`);
    };
    const [dying, living] = [on(0), on(1)];
    await rig.writer.append({ inbox: dying, entries: [entry('m1')] });
    const inFlight = Array.from({ length: 50 }, (_, i) =>
      rig.writer.append({ inbox: dying, entries: [entry(`f${i}`)] }).then(
        () => 'written',
        (err: unknown) => err,
      ),
    );
    await rig.threads[0]!.worker.terminate();
    // Each settles: written before the thread went, or refused typed — never left hanging.
    const outcomes = await Promise.all(inFlight);
    for (const outcome of outcomes) if (outcome !== 'written') expect(outcome).toBeInstanceOf(ThreadUnavailableError);
    const started = performance.now();
    const refused = await rig.writer.append({ inbox: dying, entries: [entry('m2')] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OverloadedError);
    expect((refused as OverloadedError).code).toBe('OVERLOADED');
    expect(performance.now() - started).toBeLessThan(100);
    expect((await rig.writer.append({ inbox: living, entries: [entry('m1')] }))[0]!.duplicate).toBe(false);
    await rig.writer.close();
    await expect(rig.writer.append({ inbox: living, entries: [entry('m3')] })).rejects.toThrow(OverloadedError);
    await rig.ctl.request(1, { op: 'stop' });
    await rig.threads[1]!.exited;
    await rig.hub.close();
    await rig.engine.close();
  });
});
