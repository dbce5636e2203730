/**
 * Entry and job rows written before json-rows.ts (msgpack objects, lmdb-js's default encoding)
 * stay readable next to rows of the current layout (JSON text), in the same sub-databases.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Key } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey, type Entry, type StoredJob } from '@seqline/core';
import { msgEntry } from '@seqline/testing';
import { openEmbeddedEngine } from '@seqline/store';

const root = mkdtempSync(join(tmpdir(), 'seqline-legacy-rows-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes rows the way the engine did before: the value object itself, msgpack-encoded by lmdb-js. */
async function writeOldLayout(dir: string, rows: { db: string; key: Key; value: unknown }[]): Promise<void> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 32 });
  for (const row of rows) await env.openDB<unknown, Key>({ name: row.db }).put(row.key, row.value);
  await env.close();
}

/** The raw value the engine stored: a string for the current layout. */
async function rawValue(dir: string, db: string, key: Key): Promise<unknown> {
  const env = open({ path: dir, noSubdir: false, maxDbs: 32 });
  const value = env.openDB<unknown, Key>({ name: db }).get(key);
  await env.close();
  return value;
}

describe('embedded rows written before entries were stored as JSON text', () => {
  it('an old entry row reads back, a new one is JSON text, both in one range', async () => {
    const dir = join(root, 'entries');
    const inbox = inboxKey('t', 'legacy');
    const old: Entry = msgEntry(1, 'old-1', { body: { text: 'from msgpack', list: [1, 2.5, null], nested: { ok: true } } });
    await writeOldLayout(dir, [{ db: 'timeline', key: [inbox, 1], value: old }, { db: 'timeline_appinfo', key: [inbox, 'old-1'], value: 1 }]);

    const engine = await openEmbeddedEngine({ dir });
    const fresh = msgEntry(2, 'new-2', { body: JSON.parse('{"__proto__": {"x": 1}}') as Entry['body'] });
    expect(await engine.timeline.findSeqs(inbox, ['old-1'])).toEqual(new Map([['old-1', 1]]));
    expect(await engine.timeline.append(inbox, [fresh, msgEntry(3, 'old-1')])).toEqual([{ seq: 2, duplicate: false }, { seq: 1, duplicate: true }]);
    expect(await engine.timeline.getEntry(inbox, 1)).toEqual(old);
    const both = await engine.timeline.readAfter(inbox, 0, 10);
    expect(both.map((entry) => JSON.stringify(entry))).toEqual([JSON.stringify(old), JSON.stringify(fresh)]);
    expect(await engine.timeline.readBefore(inbox, 10, 10)).toEqual([both[1], both[0]]);
    await engine.close();

    expect(typeof await rawValue(dir, 'timeline', [inbox, 2])).toBe('string');
    expect(await rawValue(dir, 'timeline', [inbox, 1])).toEqual(old);
  });

  it('an old pending and an old dead job read back, are removed and revived', async () => {
    const dir = join(root, 'jobs');
    const job = (id: string, createdAt: number): StoredJob => ({
      id, queue: 'fanout', payload: { tenant: 't', entry: { body: { text: 'hi' } } }, attempts: 1, notBefore: 0, createdAt,
    });
    const pending = job('p1', 10);
    const dead = { ...job('d1', 20), lastError: 'boom' };
    await writeOldLayout(dir, [
      { db: 'jobs', key: 'p1', value: pending },
      { db: 'job_order', key: [10, 'p1'], value: true },
      { db: 'job_queue_order', key: ['fanout', 10, 'p1'], value: true },
      { db: 'jobs_dead', key: 'd1', value: dead },
      { db: 'jobs_dead_order', key: [20, 'd1'], value: true },
    ]);

    const engine = await openEmbeddedEngine({ dir });
    expect(await engine.jobs.list()).toEqual([pending]);
    expect(await engine.jobs.list('fanout')).toEqual([pending]);
    expect(await engine.jobs.listDead()).toEqual([dead]);
    expect(await engine.jobs.revive('d1', 99)).toBe(true);
    await engine.jobs.remove('p1');
    expect(await engine.jobs.list()).toEqual([{ ...dead, attempts: 0, notBefore: 99 }]);
    expect(await engine.jobs.listDead()).toEqual([]);
    await engine.close();
  });
});
