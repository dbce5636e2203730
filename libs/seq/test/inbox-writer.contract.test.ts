/** The InboxWriter contract against the embedded owner: InboxOwner on the LMDB engine. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { silentLogger } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';
import { inboxWriterContract } from '@seqline/testing';
import { InboxOwner } from '../src/index.ts';
import { RecordingPushBus } from './fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-writer-contract-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

inboxWriterContract('InboxOwner (embedded LMDB)', async (dataKey) => {
  const engine = await openEmbeddedEngine({ dir: join(root, dataKey) });
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const writer = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    push: new RecordingPushBus(),
    logger: silentLogger,
    epoch,
  });
  return {
    store: { writer, timeline: engine.timeline },
    close: async () => {
      await writer.close();
      await engine.close();
    },
  };
});
