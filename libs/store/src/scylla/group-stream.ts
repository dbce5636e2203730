/**
 * Read-fanout group streams on CQL: a CqlSeqLog over `group_stream` / `group_stream_appinfos` /
 * `group_buckets`, plus per-member read cursors in `group_cursor`.
 */
import {
  BadRequestError,
  type DedupKey,
  type Entry,
  type GroupKey,
  type GroupPageAfter,
  type GroupPageBefore,
  type GroupStreamAppend,
  type GroupStreamStore,
  type InboxKey,
  type Logger,
  type StoredOutcome,
  type GroupCursor,
  type GroupCursorRef,
} from '@seqline/core';
import { optNum, str, type Cql } from './cql.ts';
import { CqlSeqLog } from './seq-log.ts';

export const GROUP_STREAM_TABLES = { entries: 'group_stream', appinfos: 'group_stream_appinfos', buckets: 'group_buckets', key: 'grp' };

export class CqlGroupStreamStore implements GroupStreamStore {
  private readonly log: CqlSeqLog;
  private readonly setCursorQuery: string;
  private readonly getCursorQuery: string;
  private readonly listCursorsQuery: string;

  constructor(
    private readonly cql: Cql,
    logger: Logger,
  ) {
    this.log = new CqlSeqLog(cql, GROUP_STREAM_TABLES, logger);
    const cursors = cql.table('group_cursor');
    // Write timestamp = the cursor: last-write-wins becomes highest-cursor-wins, so racing
    // acks from any number of processes keep the highest without a read or a Paxos round.
    this.setCursorQuery = `UPDATE ${cursors} USING TIMESTAMP ? SET gseq = ? WHERE grp = ? AND inbox = ?`;
    this.getCursorQuery = `SELECT gseq FROM ${cursors} WHERE grp = ? AND inbox = ?`;
    this.listCursorsQuery = `SELECT inbox, gseq FROM ${cursors} WHERE grp = ?`;
  }

  append({ group, entries, guard }: GroupStreamAppend): Promise<StoredOutcome[]> {
    return this.log.append(group, entries, guard);
  }

  findSeqs(input: { group: GroupKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.log.findSeqs(input.group, input.keys);
  }

  readAfter({ group, afterGseq, limit }: GroupPageAfter): Promise<Entry[]> {
    return this.log.readAfter(group, afterGseq, limit);
  }

  readBefore({ group, beforeGseq, limit }: GroupPageBefore): Promise<Entry[]> {
    return this.log.readBefore(group, beforeGseq, limit);
  }

  headSeq(group: GroupKey): Promise<number> {
    return this.log.headSeq(group);
  }

  async setCursor({ group, inbox, gseq }: GroupCursor): Promise<number> {
    if (!Number.isSafeInteger(gseq) || gseq < 0) throw new BadRequestError(`invalid gseq ${String(gseq)}`);
    await this.cql.write(this.setCursorQuery, [gseq, gseq, group, inbox]);
    return this.getCursor({ group, inbox });
  }

  async getCursor({ group, inbox }: GroupCursorRef): Promise<number> {
    const row = (await this.cql.read(this.getCursorQuery, [group, inbox])).first();
    return optNum(row?.get('gseq')) ?? 0;
  }

  async listCursors(group: GroupKey): Promise<Map<InboxKey, number>> {
    const rows = await this.cql.readAll(this.listCursorsQuery, [group]);
    return new Map(rows.map((row) => [str(row.get('inbox'), 'inbox') as InboxKey, optNum(row.get('gseq')) ?? 0]));
  }
}
