/**
 * The GroupStreamAppender contract against the embedded writer: GroupStreamWriter on the LMDB
 * engine. A small ceiling step makes the concurrent cases cross several ceiling raises; a
 * restart reopens the engine and takes a new epoch, as a restarted server does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { silentLogger } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { groupStreamAppenderContract } from '@seqline/testing';
import { GroupStreamWriter } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-group-appender-contract-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function writerOn(engine: EmbeddedEngine): Promise<GroupStreamWriter> {
  const epoch = await engine.ceilings.nextEpoch('group-writer');
  const writer = new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger: silentLogger,
    epoch,
    step: 16,
    shardCount: 4,
  });
  await writer.start();
  return writer;
}

groupStreamAppenderContract('GroupStreamWriter (embedded LMDB)', async (dataKey) => {
  const dir = join(root, dataKey);
  let engine = await openEmbeddedEngine({ dir });
  let writer = await writerOn(engine);
  const close = async (): Promise<void> => {
    await writer.close();
    await engine.close();
  };
  return {
    store: {
      get appender() {
        return writer;
      },
      get streams() {
        return engine.groupStreams;
      },
      async restart() {
        await close();
        engine = await openEmbeddedEngine({ dir });
        writer = await writerOn(engine);
      },
    },
    close,
  };
});
