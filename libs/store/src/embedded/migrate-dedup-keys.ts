/**
 * The embedded engine's one-time move of dedup rows to core's dedup keys, run when the engine
 * opens. Earlier versions keyed a stream's dedup rows by the plain appinfo, so a second sender's
 * message with the same appinfo was taken for a duplicate; now a message's row is keyed by
 * `<from>/<appinfo>` (dedupKeyOf). Each row whose entry says it is of the old layout (the
 * entry's appinfo is the row's key, but its dedup key is not) is re-keyed; a server entry's key
 * is its appinfo in both layouts, so its row stays. Afterwards the append path reads one key,
 * as before: no legacy lookup on any append.
 *
 * Safe to stop at any point: rows are moved in chunks, each one transaction, and a row already
 * moved is recognised by the same test (its key is its entry's dedup key). The store's marker
 * is written last, so the next open skips the scan.
 */
import type { Database } from 'lmdb';
import { dedupKeyOf, type Logger } from '@seqline/core';
import { fromJsonRow } from './json-rows.ts';
import type { AppinfoKey, SeqLogDbs } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

/** The layout of dedup rows this code writes; stored under DEDUP_KEYS_MARKER once migrated. */
export const DEDUP_KEYS_LAYOUT = 2;
export const DEDUP_KEYS_MARKER = 'dedupKeys';
/** Rows scanned per transaction: bounds how long one blocks the event loop. */
const CHUNK_ROWS = 5_000;

export interface DedupKeyMigration {
  meta: Database<number, string>;
  logs: readonly SeqLogDbs[];
  writes: WriteBatcher;
  logger: Logger;
}

/** Re-keys every old-layout dedup row, then records the layout. Returns how many rows moved. */
export async function migrateDedupKeys(m: DedupKeyMigration): Promise<number> {
  if (m.meta.get(DEDUP_KEYS_MARKER) === DEDUP_KEYS_LAYOUT) return 0;
  let moved = 0;
  for (const log of m.logs) {
    let after: AppinfoKey | undefined;
    for (;;) {
      const chunk = Array.from(
        log.appinfos.getRange({ ...(after === undefined ? {} : { start: after, exclusiveStart: true }), limit: CHUNK_ROWS }),
        ({ key }) => key,
      );
      if (chunk.length === 0) break;
      after = chunk.at(-1);
      moved += await m.writes.run(() => rekeyRows(log, chunk, m.logger));
    }
  }
  await m.writes.run(() => m.meta.put(DEDUP_KEYS_MARKER, DEDUP_KEYS_LAYOUT));
  if (moved > 0) m.logger.info({ moved }, 'dedup rows re-keyed by sender');
  return moved;
}

/** Runs inside a write transaction: re-keys the old-layout rows among `rows`. */
function rekeyRows(log: SeqLogDbs, rows: readonly AppinfoKey[], logger: Logger): number {
  let moved = 0;
  for (const [stream, key] of rows) {
    const seq = log.appinfos.get([stream, key]);
    if (seq === undefined) continue;
    const entry = fromJsonRow(log.entries.get([stream, seq]));
    if (entry === undefined) continue;
    const own = dedupKeyOf(entry);
    if (own === key) continue; // a server entry's row, or one moved already
    if (entry.appinfo !== key) {
      logger.warn({ stream, key, seq }, 'dedup row names an entry of another appinfo; left as it is');
      continue;
    }
    place(log, stream, own, seq);
    if (log.appinfos.get([stream, key]) === seq) log.appinfos.remove([stream, key]);
    moved++;
  }
  return moved;
}

/**
 * Writes `key` → `seq`. An old-layout row may hold that key (another sender's message whose
 * appinfo reads "<from>/<appinfo>"): it is moved to its own key first, never overwritten.
 */
function place(log: SeqLogDbs, stream: string, key: string, seq: number): void {
  const holder = log.appinfos.get([stream, key]);
  if (holder !== undefined && holder !== seq) {
    const other = fromJsonRow(log.entries.get([stream, holder]));
    // Its own key is longer than `key`: the chain of moves ends.
    if (other !== undefined && dedupKeyOf(other) !== key) place(log, stream, dedupKeyOf(other), holder);
  }
  log.appinfos.put([stream, key], seq);
}
