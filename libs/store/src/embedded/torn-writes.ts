/**
 * Undo records for write transactions that a thread's end can tear. lmdb-js commits what a
 * transaction callback had written when the thread running it is terminated mid-callback (a
 * worker's out-of-memory end, `Worker.terminate()`): measured, an `env.transaction` or
 * `childTransaction` callback cut after its first put commits that put alone. One transaction
 * then holds an entry without its dedup row (a resend stores a second copy) or a conversation
 * record without its watermark (every later append of the inbox is refused).
 *
 * So, on a thread other than the main one (whose end is the process's, which LMDB aborts
 * whole), every put and remove inside a WriteBatcher transaction first records the row as it
 * was, under [threadId, n] in UNDO_DB_NAME with the transaction's number, and the transaction's
 * last write marks that number complete under [threadId, -1]. Each transaction overwrites the
 * records of the one before (no delete per row). A torn one leaves, for each of
 * its writes that landed, a record above the complete mark, written before the write.
 * `rollBackTornWrites` puts those rows back, newest first: the thread supervisor runs it when a
 * thread ended, before starting it again, and the engine at open (a process that died before
 * its supervisor could).
 */
import { asBinary, type Database, type Key, type RootDatabase } from 'lmdb';
import type { Logger } from '@seqline/core';

export const UNDO_DB_NAME = 'write_undo';

/** [transaction number, db name, key, the row's bytes before the write (null: there was none)]. */
type UndoRecord = [txn: number, name: string, key: Key, before: Uint8Array | null];
/** n = COMPLETE_MARK: the number of the thread's last complete transaction. */
type UndoKey = [threadId: number, n: number];
const COMPLETE_MARK = -1;

interface WritableDb {
  put(key: Key, value: unknown, ...rest: unknown[]): unknown;
  remove(key: Key, ...rest: unknown[]): unknown;
  getBinary(key: Key): Uint8Array | undefined;
}

export class WriteJournal {
  private readonly undo: Database<UndoRecord | number, UndoKey>;
  private recording = false;
  private txn = 0;
  private count = 0;

  /** `threadId` undefined: the main thread, whose transactions nothing tears; nothing is recorded. */
  constructor(
    env: RootDatabase,
    private readonly threadId: number | undefined,
  ) {
    this.undo = env.openDB<UndoRecord | number, UndoKey>({ name: UNDO_DB_NAME });
  }

  /** `db`, whose puts and removes inside a journaled transaction record the row they replace. */
  watch<D extends object>(name: string, db: D): D {
    if (this.threadId === undefined) return db;
    const target = db as unknown as WritableDb;
    const put = target.put.bind(target);
    const remove = target.remove.bind(target);
    target.put = (key, ...rest) => {
      this.record(name, target, key);
      return put(key, ...rest);
    };
    target.remove = (key, ...rest) => {
      this.record(name, target, key);
      return remove(key, ...rest);
    };
    return db;
  }

  /** Runs a transaction's callback with its writes recorded, then marks it complete (its last write). */
  run(callback: () => void): void {
    if (this.threadId === undefined) return callback();
    this.txn++;
    this.count = 0;
    this.recording = true;
    try {
      callback();
    } finally {
      this.recording = false;
      if (this.count > 0) this.undo.put([this.threadId, COMPLETE_MARK], this.txn);
    }
  }

  private record(name: string, db: WritableDb, key: Key): void {
    if (!this.recording || this.threadId === undefined) return;
    // getBinary answers a copy: lmdb-js reuses only the buffer of getBinaryFast.
    this.undo.put([this.threadId, this.count++], [this.txn, name, key, db.getBinary(key) ?? null]);
  }
}

/**
 * Puts back the rows of torn transactions: those of thread `threadId` (its thread ended), or of
 * every thread (none runs: the engine's open). Returns how many rows were put back.
 */
export async function rollBackTornWrites(env: RootDatabase, logger: Logger, threadId?: number): Promise<number> {
  const undo = env.openDB<UndoRecord | number, UndoKey>({ name: UNDO_DB_NAME });
  const dbs = new Map<string, Database>();
  const dbOf = (name: string): Database => {
    let db = dbs.get(name);
    if (db === undefined) dbs.set(name, (db = env.openDB({ name })));
    return db;
  };
  // Per thread: its complete mark, then its records in write order.
  const threads = new Map<number, { complete: number; records: Array<{ key: UndoKey; record: UndoRecord }> }>();
  const range = threadId === undefined ? {} : { start: [threadId], end: [threadId + 1] };
  for (const { key, value } of undo.getRange(range)) {
    const thread = threads.get(key[0]) ?? { complete: 0, records: [] };
    threads.set(key[0], thread);
    if (key[1] === COMPLETE_MARK) thread.complete = value as number;
    else {
      // The old bytes copied: a range's decoded binary may view a buffer the next row reuses.
      const [txn, name, rowKey, before] = value as UndoRecord;
      thread.records.push({ key, record: [txn, name, rowKey, before === null ? null : Uint8Array.from(before)] });
    }
  }
  if (threads.size === 0) return 0;
  let restored = 0;
  await env.transaction(() => {
    for (const [thread, { complete, records }] of threads) {
      // Newest first: a row written twice in the transaction ends as it was before the first write.
      for (const { record } of records.reverse()) {
        const [txn, name, rowKey, before] = record;
        if (txn <= complete) continue;
        if (before === null) dbOf(name).remove(rowKey);
        else dbOf(name).put(rowKey, asBinary(before));
        restored++;
      }
      for (const { key } of records) undo.remove(key);
      undo.remove([thread, COMPLETE_MARK]);
    }
  });
  if (restored > 0)
    logger.warn({ rows: restored, ...(threadId !== undefined && { threadId }) }, 'rolled back the rows of a torn write transaction');
  return restored;
}
