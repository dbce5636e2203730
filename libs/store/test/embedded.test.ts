/** Every port contract suite against the embedded LMDB engine, plus engine-specific checks. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import {
  groupStoreContract,
  groupStreamStoreContract,
  jobStoreContract,
  msgEntry,
  seqCeilingStoreContract,
  timelineStoreContract,
  type StoreOpener,
} from '@seqline/testing';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { LMDB_GROUP_STREAM, LMDB_TIMELINE, previousLmdbLayout } from './previous-layout.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-embedded-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Same dataKey → same directory, so a second open is a restart on the same data. */
function opener<T>(pick: (engine: EmbeddedEngine) => T): StoreOpener<T> {
  return async (dataKey) => {
    const engine = await openEmbeddedEngine({ dir: join(root, dataKey) });
    return { store: pick(engine), close: () => engine.close() };
  };
}

timelineStoreContract(
  'embedded LMDB',
  opener((engine) => engine.timeline),
  { previousLayout: previousLmdbLayout((dataKey) => join(root, dataKey), LMDB_TIMELINE) },
);
groupStoreContract(
  'embedded LMDB',
  opener((engine) => engine.groups),
);
groupStreamStoreContract(
  'embedded LMDB',
  opener((engine) => engine.groupStreams),
  { previousLayout: previousLmdbLayout((dataKey) => join(root, dataKey), LMDB_GROUP_STREAM) },
);
seqCeilingStoreContract(
  'embedded LMDB',
  opener((engine) => engine.ceilings),
);
jobStoreContract(
  'embedded LMDB',
  opener((engine) => engine.jobs),
);

describe('embedded engine', () => {
  it('opens a directory whose name has a dot, and close is idempotent', async () => {
    const dir = join(root, 'with.dot');
    const engine = await openEmbeddedEngine({ dir });
    await engine.timeline.append({ inbox: inboxKey('t', 'a'), entries: [msgEntry(1, 'x')] });
    await Promise.all([engine.close(), engine.close()]);
    const again = await openEmbeddedEngine({ dir });
    expect(await again.timeline.headSeq(inboxKey('t', 'a'))).toBe(1);
    await again.close();
  });

  it('racing appends of one appinfo to one inbox store it once', async () => {
    // The single-writer rule makes this rare, but a redelivery racing a resend must not
    // produce two copies: transaction callbacks run one at a time.
    const engine = await openEmbeddedEngine({ dir: join(root, 'race') });
    const inbox = inboxKey('t', 'race');
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => engine.timeline.append({ inbox, entries: [msgEntry(i + 1, 'same')] })),
    );
    expect(outcomes.flat().filter((o) => !o.duplicate)).toEqual([{ seq: 1, duplicate: false }]);
    expect(outcomes.flat().every((o) => o.seq === 1)).toBe(true);
    expect(await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 100 })).toHaveLength(1);
    await engine.close();
  });

  it('one failing append does not disturb appends batched into the same commit', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'batch-failure') });
    const good = inboxKey('t', 'good');
    const bad = inboxKey('t', 'bad');
    await engine.timeline.append({ inbox: bad, entries: [msgEntry(5, 'b5')] });
    const results = await Promise.allSettled([
      engine.timeline.append({ inbox: good, entries: [msgEntry(1, 'g1')] }),
      engine.timeline.append({ inbox: bad, entries: [msgEntry(6, 'b6'), msgEntry(3, 'b3')] }),
      engine.timeline.append({ inbox: good, entries: [msgEntry(2, 'g2')] }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await engine.timeline.readAfter({ inbox: good, afterSeq: 0, limit: 10 })).map((e) => e.seq)).toEqual([1, 2]);
    expect((await engine.timeline.readAfter({ inbox: bad, afterSeq: 0, limit: 10 })).map((e) => e.seq)).toEqual([5]);
    await engine.close();
  });

  it('a burst larger than one transaction drain commits everything, in call order', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'burst') });
    const one = inboxKey('t', 'one');
    // Issued in one tick: more than a drain takes, so order must hold across transactions.
    const sameInbox = Array.from({ length: 4500 }, (_, i) =>
      engine.timeline.append({ inbox: one, entries: [msgEntry(i + 1, `s${i + 1}`)] }),
    );
    const manyInboxes = Array.from({ length: 3000 }, (_, i) =>
      engine.timeline.append({ inbox: inboxKey('t', `m${i}`), entries: [msgEntry(1, 'x')] }),
    );
    const outcomes = await Promise.all([...sameInbox, ...manyInboxes]);
    expect(outcomes.every(([o]) => o?.duplicate === false)).toBe(true);
    expect(await engine.timeline.headSeq(one)).toBe(4500);
    expect((await engine.timeline.readAfter({ inbox: one, afterSeq: 0, limit: 10_000 })).map((e) => e.seq)).toEqual(
      Array.from({ length: 4500 }, (_, i) => i + 1),
    );
    expect(await engine.timeline.headSeq(inboxKey('t', 'm2999'))).toBe(1);
    await engine.close();
  });

  it('writes issued before close complete; calls after close reject', async () => {
    const engine = await openEmbeddedEngine({ dir: join(root, 'closing') });
    const inbox = inboxKey('t', 'a');
    const pending = engine.timeline.append({ inbox, entries: [msgEntry(1, 'before-close')] });
    const closed = engine.close();
    expect(await pending).toEqual([{ seq: 1, duplicate: false }]);
    await closed;
    await expect(engine.timeline.append({ inbox, entries: [msgEntry(2, 'after-close')] })).rejects.toThrow();
    await expect(engine.timeline.headSeq(inbox)).rejects.toThrow();
    const reopened = await openEmbeddedEngine({ dir: join(root, 'closing') });
    expect(await reopened.timeline.headSeq(inbox)).toBe(1);
    await reopened.close();
  });
});
