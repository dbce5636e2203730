/**
 * The GroupStreamAppender contract over threads: two real worker threads, each owning half of
 * the group shards with its GroupStreamWriter (own epoch) on the one LMDB environment, and this
 * thread appending through its ThreadGroupStreamWriter (it owns no shard) and reading the same
 * environment. A restart stops both owner threads and starts two new ones with new epochs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupKey, OverloadedError, silentLogger, type GroupKey, type NewEntry } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { groupStreamAppenderContract, uniqueTenant } from '@seqline/testing';
import { ThreadGroupStreamWriter, ThreadUnavailableError, type ThreadChannel, type ThreadHub } from '../src/threads.ts';
import { meshWithThreads, type RunningThread } from './threads-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-thread-gwriter-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const SHARDS = 8;
const THREADS = 2;

interface Owners {
  hub: ThreadHub;
  threads: RunningThread[];
  writer: ThreadGroupStreamWriter;
  ctl: ThreadChannel;
}

/** Two owner threads (0, 1) and this thread (2), which only asks. */
function owners(dir: string): Owners {
  const { hub, threads } = meshWithThreads(THREADS + 1, 'thread-group-writer.ts', () => ({ dir, threads: THREADS, shardCount: SHARDS }));
  const writer = new ThreadGroupStreamWriter({ hub, threads: THREADS, shardCount: SHARDS, logger: silentLogger });
  return { hub, threads, writer, ctl: hub.open('ctl', {}) };
}

/** Each owner thread stops in order (answering what it serves), then this side's hub closes. */
async function stopOwners(rig: Owners): Promise<void> {
  await rig.writer.close();
  await Promise.all(rig.threads.map((_, i) => rig.ctl.request(i, { op: 'stop' }).catch(() => 'gone')));
  expect(await Promise.all(rig.threads.map((t) => t.exited))).toEqual(rig.threads.map(() => 0));
  await rig.hub.close();
}

groupStreamAppenderContract(`ThreadGroupStreamWriter → ${THREADS} owner threads on one LMDB environment`, async (dataKey) => {
  const dir = join(root, dataKey);
  const engine = await openEmbeddedEngine({ dir });
  let rig = owners(dir);
  return {
    store: {
      get appender() {
        return rig.writer;
      },
      streams: engine.groupStreams,
      async restart() {
        await stopOwners(rig);
        rig = owners(dir);
      },
    },
    close: async () => {
      await stopOwners(rig);
      await engine.close();
    },
  };
});

const entry = (group: GroupKey, appinfo: string): NewEntry => ({
  kind: 'msg',
  appinfo,
  from: 'bob',
  sendTime: 1_700_000_000_000,
  type: 'text',
  body: { text: appinfo },
  conv: { type: 'group', id: group.slice(group.indexOf(':') + 1) },
});

describe('thread group stream writer', () => {
  it('an append to an owner thread that died fails OVERLOADED, in flight or after; the other owner keeps appending', async () => {
    const rig = owners(join(root, 'dead'));
    const tenant = uniqueTenant();
    const on = (thread: number): GroupKey => {
      for (let i = 0; ; i++) if (rig.writer.threadOf(groupKey(tenant, `g${i}`)) === thread) return groupKey(tenant, `g${i}`);
    };
    const [dying, living] = [on(0), on(1)];
    await rig.writer.append({ group: dying, entries: [entry(dying, 'm1')] });
    const inFlight = Array.from({ length: 50 }, (_, i) =>
      rig.writer.append({ group: dying, entries: [entry(dying, `f${i}`)] }).then(
        () => 'written',
        (err: unknown) => err,
      ),
    );
    await rig.threads[0]!.worker.terminate();
    for (const outcome of await Promise.all(inFlight)) if (outcome !== 'written') expect(outcome).toBeInstanceOf(ThreadUnavailableError);
    const refused = await rig.writer.headSeq(dying).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OverloadedError);
    expect((refused as OverloadedError).code).toBe('OVERLOADED');
    expect((await rig.writer.append({ group: living, entries: [entry(living, 'm1')] }))[0]!.duplicate).toBe(false);
    await rig.writer.close();
    await expect(rig.writer.append({ group: living, entries: [entry(living, 'm2')] })).rejects.toThrow(OverloadedError);
    await rig.ctl.request(1, { op: 'stop' });
    await rig.threads[1]!.exited;
    await rig.hub.close();
  });

  it('a malformed request from another thread is refused BAD_REQUEST; nothing is stored', async () => {
    const rig = owners(join(root, 'malformed'));
    const group = groupKey(uniqueTenant(), 'g');
    const bad = await rig.hub
      .request(rig.writer.threadOf(group), 'gstream', { op: 'append', group, entries: 'nope' })
      .catch((e: unknown) => e);
    expect((bad as { code?: string }).code).toBe('BAD_REQUEST');
    expect(await rig.writer.headSeq(group)).toBe(0);
    await stopOwners(rig);
  });
});
