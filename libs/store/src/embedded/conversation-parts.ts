/**
 * The conversation index's parts on LMDB, wired as the engine wires them: over its one
 * sub-database and the inbox log, sharing the engine's WriteBatcher. The engine builds them
 * once; tests build them over an LMDB of their own to look inside.
 */
import type { Database, Key } from 'lmdb';
import type { Logger } from '@seqline/core';
import { IndexChunks } from './conversation-chunks.ts';
import { ConversationRows, type InboxLogDbs } from './conversation-dbs.ts';
import { LmdbConversationIndexWriter, MAX_REMEMBERED_WATERMARKS } from './conversation-writer.ts';
import { LmdbConversationIndex } from './conversation-index.ts';
import { LmdbConversationRebuilder } from './conversation-rebuild.ts';
import type { WriteBatcher } from './write-batcher.ts';

export interface ConversationIndexParts {
  rows: ConversationRows;
  /** Chunked index work: rebuilds, catch-ups; stopped before the environment closes. */
  chunks: IndexChunks;
  /** The SeqLog hook of the inbox log. */
  writer: LmdbConversationIndexWriter;
  index: LmdbConversationIndex;
  rebuilder: LmdbConversationRebuilder;
}

export function conversationIndexParts(deps: {
  db: Database<unknown, Key>;
  log: InboxLogDbs;
  writes: WriteBatcher;
  logger: Logger;
  /** A directory for rebuilds' scratch environments, emptied by the caller at start (removeRebuildScratches). */
  scratchRoot: string;
}): ConversationIndexParts {
  const rows = new ConversationRows(deps.db as ConstructorParameters<typeof ConversationRows>[0]);
  const chunks = new IndexChunks(rows, deps.log, deps.writes, deps.logger);
  const writer = new LmdbConversationIndexWriter(rows, deps.log, MAX_REMEMBERED_WATERMARKS, chunks);
  return {
    rows,
    chunks,
    writer,
    index: new LmdbConversationIndex(rows, deps.log),
    rebuilder: new LmdbConversationRebuilder(rows, deps.log, chunks, writer, deps.writes, deps.scratchRoot),
  };
}
