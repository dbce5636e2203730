/**
 * Write-fanout snapshots on LMDB are kept RECIPIENTS_RETENTION_MS past their send time, and no
 * longer: each record drops a few expired ones, so the table does not grow with every send ever
 * made (the CQL store gives each row that TTL instead).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKey, RECIPIENTS_RETENTION_MS } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';

const root = mkdtempSync(join(tmpdir(), 'seqline-recipients-'));
let engine: EmbeddedEngine;
beforeAll(async () => {
  engine = await openEmbeddedEngine({ dir: root });
});
afterAll(async () => {
  await engine.close();
  rmSync(root, { recursive: true, force: true });
});

describe('LMDB write-fanout snapshots', () => {
  it('a record drops the snapshots sent more than the retention before it; younger ones stay', async () => {
    const key = groupKey('t', 'g');
    const t0 = 1_763_700_000_000;
    const ref = (appinfo: string, sendTime: number) => ({ key, sender: 'alice', appinfo, sendTime });
    await engine.groups.recordRecipients({ ...ref('old', t0), recipients: ['bob'] });
    await engine.groups.recordRecipients({ ...ref('edge', t0 + 6), recipients: ['carol'] });
    await engine.groups.recordRecipients({ ...ref('young', t0 + 10), recipients: ['dan'] });

    await engine.groups.recordRecipients({ ...ref('now', t0 + RECIPIENTS_RETENTION_MS + 6), recipients: [] });
    expect(await engine.groups.recordedRecipients(ref('old', t0))).toBeNull();
    // Exactly the retention old is still kept (sent at or after now - retention).
    expect(await engine.groups.recordedRecipients(ref('edge', t0 + 6))).toEqual(['carol']);
    expect(await engine.groups.recordedRecipients(ref('young', t0 + 10))).toEqual(['dan']);
    expect(await engine.groups.recordedRecipients(ref('now', t0 + RECIPIENTS_RETENTION_MS + 6))).toEqual([]);
  });
});
