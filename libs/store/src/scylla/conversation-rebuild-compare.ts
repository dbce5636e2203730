/**
 * What a rebuild (conversation-rebuild.ts) found stored, compared with its recount without
 * holding either side's rows by message: the stored index is read a page at a time before the
 * rebuild clears it.
 *
 * - Records and list rows (one per conversation) are held and compared whole.
 * - Deleted and edit rows (one per message a delete or an edit hit) are compared row by row with
 *   the recount's, which the recount holds anyway (core's InboxRecount).
 * - Unread and visible rows (up to one per message) are compared per conversation by a count
 *   and a 64-bit sum of row hashes (two 32-bit lanes): the stored rows' are added before the
 *   clear, the recount's subtracted as its second pass hands them out; a conversation whose
 *   count or sum is not back at zero differs. The sum is order-free (stored rows come by
 *   conversation, the recount's by seq); two different sets of rows of one conversation agree
 *   by chance once in 2^64.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  conversationKey,
  type ConvRecord,
  type EditRef,
  type InboxKey,
  type RecountItems,
  type StoredWatermarkStamps,
} from '@seqline/core';
import { num, str, type Cql, type Params, type Row } from './cql.ts';
import { parseEdit, rowToRecord, type ConversationStatements } from './conversation-tables.ts';

/** Calls `visit` with each page of at most `pageRows` rows of a read (the driver's paging). */
export async function eachPage(cql: Cql, query: string, params: Params, pageRows: number, visit: (rows: Row[]) => void): Promise<void> {
  let pageState: string | undefined;
  do {
    const page = await cql.read(query, params, { fetchSize: pageRows, ...(pageState === undefined ? {} : { pageState }) });
    visit(page.rows);
    pageState = page.pageState ?? undefined;
  } while (pageState !== undefined);
}

/** Per conversation: stored rows minus the recount's, as a count and two 32-bit hash sums. */
interface RowSum {
  count: number;
  lo: number;
  hi: number;
}

const VISIBLE = 1;
const UNREAD = 2;
const UNREAD_MENTION = 3;

function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** One lane of a row's hash: the row is (kind, seq) within its conversation. */
function rowHash(seed: number, kind: number, seq: number): number {
  return fmix32(fmix32((seq >>> 0) ^ seed) ^ Math.floor(seq / 0x1_0000_0000) ^ Math.imul(kind, 0x9e3779b9));
}

export interface StoredComparisonInput {
  inbox: InboxKey;
  /** Rows per page of each read. */
  pageRows: number;
  /** Stored visible, deleted and edit rows below it name expired entries: not compared. */
  horizon: number | undefined;
  /** The watermark row as the rebuild read it. */
  mark: StoredWatermarkStamps;
  /** The recount's deleted seqs and edits (final after its first pass). */
  deleted: ReadonlySet<number>;
  edits: ReadonlyMap<number, EditRef>;
}

export class StoredIndexComparison {
  private readonly records = new Map<string, ConvRecord>();
  private readonly list = new Map<number, ConvRecord>();
  private readonly sums = new Map<string, RowSum>();
  /** Seqs whose deleted or edit row differs: their entries name the conversations. */
  private readonly seqsDiffering = new Set<number>();

  private constructor(private readonly input: StoredComparisonInput) {}

  /** Reads the stored index a page at a time (before the rebuild clears it). */
  static async read(cql: Cql, q: ConversationStatements, input: StoredComparisonInput): Promise<StoredIndexComparison> {
    const out = new StoredIndexComparison(input);
    const { inbox, pageRows, horizon, deleted, edits } = input;
    const above = (seq: number) => horizon === undefined || seq >= horizon;
    const deletedStored = new Set<number>();
    const editsStored = new Set<number>();
    await Promise.all([
      eachPage(cql, q.allRecords, [inbox], pageRows, (rows) => {
        for (const row of rows) out.records.set(str(row.get('conv_key'), 'conv_key'), rowToRecord(row));
      }),
      eachPage(cql, q.allListRows, [inbox], pageRows, (rows) => {
        for (const row of rows) out.list.set(num(row.get('last_seq')), rowToRecord(row));
      }),
      eachPage(cql, q.allUnread, [inbox], pageRows, (rows) => {
        for (const row of rows)
          out.add(str(row.get('conv_key'), 'conv_key'), row.get('mention') === true ? UNREAD_MENTION : UNREAD, num(row.get('seq')), 1);
      }),
      eachPage(cql, q.allVisible, [inbox], pageRows, (rows) => {
        for (const row of rows)
          if (above(num(row.get('seq')))) out.add(str(row.get('conv_key'), 'conv_key'), VISIBLE, num(row.get('seq')), 1);
      }),
      eachPage(cql, q.allDeleted, [inbox], pageRows, (rows) => {
        for (const seq of rows.map((row) => num(row.get('seq'))).filter(above)) {
          if (deleted.has(seq)) deletedStored.add(seq);
          else out.seqsDiffering.add(seq);
        }
      }),
      eachPage(cql, q.allEdits, [inbox], pageRows, (rows) => {
        for (const row of rows) {
          const seq = num(row.get('seq'));
          if (!above(seq)) continue;
          if (isDeepStrictEqual(parseEdit(String(row.get('edit')), seq), edits.get(seq))) editsStored.add(seq);
          else out.seqsDiffering.add(seq);
        }
      }),
    ]);
    for (const seq of deleted) if (!deletedStored.has(seq)) out.seqsDiffering.add(seq);
    for (const seq of edits.keys()) if (!editsStored.has(seq)) out.seqsDiffering.add(seq);
    return out;
  }

  /** Takes a page of the recount's unread and visible items off the stored rows' sums. */
  subtract(items: RecountItems): void {
    for (const key of items.visible) {
      const at = key.lastIndexOf('|');
      this.add(key.slice(0, at), VISIBLE, Number(key.slice(at + 1)), -1);
    }
    for (const item of items.unread) this.add(item.convKey, item.mention ? UNREAD_MENTION : UNREAD, item.seq, -1);
  }

  /**
   * Which conversations' records or rows differ from the recount (its final `records`), and
   * whether anything does, the watermark too. `convsOf` names the conversations of the entries
   * at some seqs (a deleted or edit row names only its seq).
   */
  async result(
    records: ReadonlyMap<string, ConvRecord>,
    headSeq: number,
    convsOf: (seqs: number[]) => Promise<Map<number, string>>,
  ): Promise<{ differed: boolean; keys: Set<string> }> {
    const keys = new Set<string>();
    const { mark } = this.input;
    // A sentinel left by a rebuild that was cut off: the rows are exact at no seq.
    const watermark = mark.rebuilding || mark.seq === 0 ? undefined : mark.seq;
    let differed = watermark !== (headSeq === 0 ? undefined : headSeq);
    const note = (key: string | undefined) => {
      differed = true;
      if (key !== undefined) keys.add(key);
    };
    for (const key of new Set([...this.records.keys(), ...records.keys()])) {
      if (!isDeepStrictEqual(this.records.get(key), records.get(key))) note(key);
    }
    const expectedList = new Map([...records.values()].map((rec) => [rec.lastSeq, rec]));
    for (const lastSeq of new Set([...this.list.keys(), ...expectedList.keys()])) {
      const [have, want] = [this.list.get(lastSeq), expectedList.get(lastSeq)];
      if (!isDeepStrictEqual(have, want)) for (const rec of [have, want]) note(rec === undefined ? undefined : conversationKey(rec.conv));
    }
    for (const [key, sum] of this.sums) if (sum.count !== 0 || sum.lo !== 0 || sum.hi !== 0) note(key);
    if (this.seqsDiffering.size > 0) {
      const convs = await convsOf([...this.seqsDiffering]);
      for (const seq of this.seqsDiffering) note(convs.get(seq));
    }
    return { differed, keys };
  }

  private add(convKey: string, kind: number, seq: number, sign: 1 | -1): void {
    let sum = this.sums.get(convKey);
    if (sum === undefined) this.sums.set(convKey, (sum = { count: 0, lo: 0, hi: 0 }));
    sum.count += sign;
    sum.lo = (sum.lo + sign * rowHash(0x243f6a88, kind, seq)) >>> 0;
    sum.hi = (sum.hi + sign * rowHash(0x85a308d3, kind, seq)) >>> 0;
  }
}
