/**
 * Inbox timelines on CQL: a CqlSeqLog over `timeline` / `timeline_appinfos` / `inbox_buckets`, plus
 * the receipt state of entries in `timeline_readers` (a set per entry, kept apart from the
 * entry so getEntry returns it exactly as appended).
 */
import {
  NotFoundError,
  type AppendOutcome,
  type Entry,
  type InboxKey,
  type Logger,
  type TimelineStore,
  type WriteGuard,
} from '@seqline/core';
import type { Cql } from './cql.ts';
import { bucketOf } from './entry-codec.ts';
import { CqlSeqLog } from './seq-log.ts';

export const TIMELINE_TABLES = { entries: 'timeline', appinfos: 'timeline_appinfos', buckets: 'inbox_buckets', key: 'inbox' };

export class CqlTimelineStore implements TimelineStore {
  private readonly log: CqlSeqLog;
  private readonly addReadersQuery: string;
  private readonly getReadersQuery: string;

  constructor(
    private readonly cql: Cql,
    logger: Logger,
  ) {
    this.log = new CqlSeqLog(cql, TIMELINE_TABLES, logger);
    const readers = cql.table('timeline_readers');
    this.addReadersQuery = `UPDATE ${readers} SET readers = readers + ? WHERE inbox = ? AND bucket = ? AND seq = ?`;
    this.getReadersQuery = `SELECT readers FROM ${readers} WHERE inbox = ? AND bucket = ? AND seq = ?`;
  }

  append(inbox: InboxKey, entries: Entry[], guard?: WriteGuard): Promise<AppendOutcome[]> {
    return this.log.append(inbox, entries, guard);
  }

  findSeqs(inbox: InboxKey, appinfos: string[]): Promise<Map<string, number>> {
    return this.log.findSeqs(inbox, appinfos);
  }

  getEntry(inbox: InboxKey, seq: number): Promise<Entry | null> {
    return this.log.getEntry(inbox, seq);
  }

  readAfter(inbox: InboxKey, afterSeq: number, limit: number): Promise<Entry[]> {
    return this.log.readAfter(inbox, afterSeq, limit);
  }

  readBefore(inbox: InboxKey, beforeSeq: number, limit: number): Promise<Entry[]> {
    return this.log.readBefore(inbox, beforeSeq, limit);
  }

  headSeq(inbox: InboxKey): Promise<number> {
    return this.log.headSeq(inbox);
  }

  /**
   * A set addition is a commutative merge on the server: concurrent calls (from any process)
   * never lose each other's readers. The union is then read back at the same consistency, so
   * it contains at least this call's readers and every addition that completed before.
   */
  async addReaders(inbox: InboxKey, seq: number, readers: string[]): Promise<string[]> {
    if (!(await this.log.hasEntry(inbox, seq))) throw new NotFoundError(`no entry ${seq} in ${inbox}`);
    const fresh = [...new Set(readers)];
    if (fresh.length > 0) await this.cql.write(this.addReadersQuery, [fresh, inbox, bucketOf(seq), seq]);
    return this.getReaders(inbox, seq);
  }

  async getReaders(inbox: InboxKey, seq: number): Promise<string[]> {
    if (!Number.isSafeInteger(seq) || seq < 1) return [];
    const row = (await this.cql.read(this.getReadersQuery, [inbox, bucketOf(seq), seq])).first();
    const readers: unknown = row?.get('readers');
    return Array.isArray(readers) ? readers.map(String).sort() : [];
  }
}
