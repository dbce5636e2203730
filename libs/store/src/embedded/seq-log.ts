/**
 * A numbered, appinfo-deduplicated log on LMDB: the shared core of inbox timelines and group
 * streams. Appends go through the WriteBatcher: concurrent appends (to any streams) share one
 * transaction and commit, and each append's work still sees every earlier write. The head of
 * a stream is its last key (one reverse B-tree seek): no separate head key to rewrite on every
 * append, which measurably cost single-entry append throughput.
 */
import type { Database } from 'lmdb';
import {
  assertStorableEntry,
  dedupKeyOf,
  InternalError,
  isStorableKey,
  type DedupKey,
  type Entry,
  type StoredOutcome,
} from '@seqline/core';
import { fromJsonRow, toJsonRow, type JsonRow } from './json-rows.ts';
import { MAX_KEY_NUMBER, MAX_KEY_PART_BYTES } from './keys.ts';
import type { WriteBatcher } from './write-batcher.ts';

export type SeqKey = [stream: string, seq: number];
/** A dedup row's key: the stream and core's dedupKeyOf of the entry (migrate-dedup-keys.ts). */
export type AppinfoKey = [stream: string, key: string];

export interface SeqLogDbs {
  /** Entries as JSON text (json-rows.ts). */
  entries: Database<JsonRow<Entry>, SeqKey>;
  appinfos: Database<number, AppinfoKey>;
}

/**
 * State derived from a stream's entries and written in the same transaction (an inbox's
 * conversation index). `prepare` runs before the first write of the append and may throw (the
 * append then fails with nothing written); the function it returns only writes, and returns
 * what the append's caller may learn of the derived state (TimelineAppend.indexed) when
 * `derive` asked for it.
 */
export interface AppendHook<D> {
  /**
   * NOT_READY instead of the writing function: the derived state is too far behind to be caught
   * up in this transaction; the append writes nothing and waits for `ready`, then runs again.
   */
  prepare(stream: string, headBefore: number, written: readonly Entry[], derive: boolean): (() => D | undefined) | NotReady;
  /**
   * Asked before an append is queued: undefined when it may be queued now; else a promise that
   * resolves once it may (with the error of the work it waited for, if that failed: the append
   * then fails with it). Appends waiting on one promise are queued in the order they asked.
   */
  ready?(stream: string): Promise<Error | undefined> | undefined;
}

export const NOT_READY = Symbol('not ready');
export type NotReady = typeof NOT_READY;

/** The head of a stream: its last key (one reverse B-tree seek). */
export function lastSeqOf(entries: Database<JsonRow<Entry>, SeqKey>, stream: string): number {
  for (const key of entries.getKeys({ start: [stream, MAX_KEY_NUMBER], end: [stream], reverse: true, limit: 1 })) return key[1];
  return 0;
}

export class SeqLog<D = never> {
  constructor(
    private readonly dbs: SeqLogDbs,
    private readonly writes: WriteBatcher,
    private readonly hook?: AppendHook<D>,
  ) {}

  async append(stream: string, batch: Entry[]): Promise<StoredOutcome[]> {
    return (await this.appendDerived(stream, batch, false)).outcomes;
  }

  /** `append`, with what the hook derived when it ran (absent: no new entry, no hook, or not asked). */
  async appendDerived(stream: string, batch: Entry[], derive = true): Promise<{ outcomes: StoredOutcome[]; derived?: D }> {
    if (batch.length === 0) return { outcomes: [] };
    for (const entry of batch) assertStorableEntry(stream, entry);
    for (;;) {
      const wait = this.hook?.ready?.(stream);
      if (wait !== undefined) {
        const failure = await wait;
        if (failure !== undefined) throw failure;
        continue;
      }
      const result = await this.writes.run(() => this.appendInTxn(stream, batch, derive));
      if (result !== NOT_READY) return result;
    }
  }

  /**
   * Runs inside the write transaction. Every check happens before the first write (see
   * WriteBatcher: a throw fails only this append, writes already made would commit). A
   * duplicate's original is read in the same transaction as its dedup row.
   */
  private appendInTxn(stream: string, batch: Entry[], derive: boolean): { outcomes: StoredOutcome[]; derived?: D } | NotReady {
    const headBefore = this.lastSeq(stream);
    let head = headBefore;
    const seen = new Map<DedupKey, Entry>();
    const outcomes: StoredOutcome[] = [];
    const toWrite: Entry[] = [];
    const keys: DedupKey[] = [];
    for (const entry of batch) {
      const key = dedupKeyOf(entry);
      const original = seen.get(key) ?? this.storedAt(stream, this.dbs.appinfos.get([stream, key]));
      if (original !== undefined) {
        outcomes.push({ seq: original.seq, duplicate: true, original });
        continue;
      }
      if (entry.seq <= head) {
        throw new InternalError(`seq ${entry.seq} is not above head ${head} of ${stream}`);
      }
      head = entry.seq;
      seen.set(key, entry);
      outcomes.push({ seq: entry.seq, duplicate: false });
      toWrite.push(entry);
      keys.push(key);
    }
    const writeDerived = toWrite.length > 0 ? this.hook?.prepare(stream, headBefore, toWrite, derive) : undefined;
    if (writeDerived === NOT_READY) return NOT_READY;
    toWrite.forEach((entry, i) => {
      this.dbs.entries.put([stream, entry.seq], toJsonRow(entry));
      this.dbs.appinfos.put([stream, keys[i] as DedupKey], entry.seq);
    });
    const derived = writeDerived?.();
    return derived === undefined ? { outcomes } : { outcomes, derived };
  }

  /** The entry a dedup row points at: always there (both are written in one transaction). */
  private storedAt(stream: string, seq: number | undefined): Entry | undefined {
    if (seq === undefined) return undefined;
    const row = this.dbs.entries.get([stream, seq]);
    if (row === undefined) throw new InternalError(`dedup row of ${stream} points at seq ${seq}, which holds no entry`);
    return fromJsonRow(row);
  }

  async findSeqs(stream: string, keys: readonly DedupKey[]): Promise<Map<DedupKey, number>> {
    const found = new Map<DedupKey, number>();
    for (const key of keys) {
      if (!isStorableKey(key)) continue; // could never have been stored
      const seq = this.dbs.appinfos.get([stream, key]);
      if (seq !== undefined) found.set(key, seq);
    }
    return found;
  }

  async getEntry(stream: string, seq: number): Promise<Entry | null> {
    return fromJsonRow(this.dbs.entries.get([stream, seq])) ?? null;
  }

  hasEntry(stream: string, seq: number): boolean {
    return this.dbs.entries.doesExist([stream, seq]);
  }

  async readAfter(stream: string, afterSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const range = this.dbs.entries.getRange({
      start: [stream, afterSeq],
      exclusiveStart: true,
      end: [stream, MAX_KEY_NUMBER],
      inclusiveEnd: true,
      limit,
    });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }

  async readBefore(stream: string, beforeSeq: number, limit: number): Promise<Entry[]> {
    if (!(limit > 0)) return [];
    const range = this.dbs.entries.getRange({ start: [stream, beforeSeq], exclusiveStart: true, end: [stream], reverse: true, limit });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }

  async headSeq(stream: string): Promise<number> {
    return this.lastSeq(stream);
  }

  private lastSeq(stream: string): number {
    return lastSeqOf(this.dbs.entries, stream);
  }
}

/** Whether a string fits in a key part (job ids and queue names; appinfos: isStorableAppinfo). */
export function fitsInKey(part: string): boolean {
  return Buffer.byteLength(part, 'utf8') <= MAX_KEY_PART_BYTES;
}
