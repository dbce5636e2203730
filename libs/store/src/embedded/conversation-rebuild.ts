/**
 * Rebuilds one inbox's conversation index on LMDB from the inbox (`seqline-admin conversations
 * rebuild`) in bounded chunks (conversation-chunks.ts), never in one write transaction:
 *
 * 1. Fold the inbox into a scratch environment of its own (rebuild-scratch.ts), a chunk per
 *    write, with the writer's own fold, while the inbox's appends go on into the live index.
 * 2. Hold the inbox (its appends wait; no other inbox's do), let the appends already queued
 *    commit, fold the rest, and compare the scratch with the live index a page at a time: both
 *    exact at the same head, neither written. If they agree, the live index stays as it was,
 *    byte for byte (its watermark moved up to the head if it was below), and that is all.
 * 3. If they differ in at most MAX_PATCH_ROWS rows (a few drifted conversations), rewrite those
 *    rows in the live index, still held, in one transaction with the watermark.
 * 4. If more: copy the scratch into the engine's space the index does not live in
 *    (conversation-dbs.ts, IndexSpace), cleared first, in key order; hold the inbox again, fold
 *    what was appended meanwhile into that space, and switch to it with one write. Then clear
 *    the old space.
 *
 * All or nothing (docs/decisions.md, "Rebuild is all or nothing", "Bounded rebuild and
 * catch-up on LMDB"): readers and appends only ever see the live space, which the rebuild
 * writes only with a patch (one transaction) or a switch (one write). A rebuild cut off
 * anywhere leaves at most rows in the engine's space that is not live, which the next rebuild
 * clears before using it, and a scratch directory, which the engine removes when it opens.
 */
import { performance } from 'node:perf_hooks';
import { conversationKey, isActivity, type ConversationRebuilder, type ConversationRebuildReport, type InboxKey } from '@seqline/core';
import { ConversationRows, type IndexRow, type InboxLogDbs } from './conversation-dbs.ts';
import { PAGE_ROWS, type IndexChunks } from './conversation-chunks.ts';
import type { LmdbConversationIndexWriter } from './conversation-writer.ts';
import { fromJsonRow } from './json-rows.ts';
import { RebuildScratch } from './rebuild-scratch.ts';
import type { WriteBatcher } from './write-batcher.ts';

interface Comparison {
  differed: boolean;
  changedConversations: Set<string>;
  /** Records of the rebuilt index. */
  conversations: number;
  /** The rows that make the live index the rebuilt one; undefined past MAX_PATCH_ROWS (copy and switch instead). */
  patch: { put: IndexRow[]; remove: IndexRow[] } | undefined;
}

/** Most rows a rebuild rewrites in the live index itself: one commit's worth, like a page of a copy. */
const MAX_PATCH_ROWS = 2000;

export class LmdbConversationRebuilder implements ConversationRebuilder {
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
    private readonly chunks: IndexChunks,
    private readonly writer: LmdbConversationIndexWriter,
    private readonly writes: WriteBatcher,
    /** Where each rebuild's scratch environment goes (removed when the engine opens). */
    private readonly scratchRoot: string,
  ) {}

  /** In the inbox's turn: after its earlier rebuild or catch-up, before the next. */
  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport> {
    return this.chunks.inTurn(inbox, () => this.rebuild(inbox));
  }

  private async rebuild(inbox: InboxKey): Promise<ConversationRebuildReport> {
    // Only a rebuild switches spaces, and this one holds the inbox's turn.
    const live = this.rows.live(inbox);
    const scratch = await RebuildScratch.open(this.scratchRoot);
    try {
      const { comparison, entries, headSeq } = await this.foldAndCompare(live, scratch, inbox);
      if (comparison.differed && comparison.patch === undefined) await this.switchTo(live.other, scratch, inbox);
      return {
        differed: comparison.differed,
        changedConversations: [...comparison.changedConversations].sort(),
        conversations: comparison.conversations,
        entries,
        headSeq,
      };
    } finally {
      await scratch.remove();
    }
  }

  /**
   * Folds the inbox into the scratch while its appends go on, then, the inbox held, the rest,
   * and compares the scratch with the live index: both exact at one head, neither written. A
   * difference of at most one commit's rows is patched into the live index there and then, in
   * one transaction with the watermark.
   */
  private async foldAndCompare(
    live: ConversationRows,
    scratch: RebuildScratch,
    inbox: InboxKey,
  ): Promise<{ comparison: Comparison; entries: number; headSeq: number }> {
    const into = { rows: scratch.rows, write: (work: () => void) => scratch.write(work) };
    const most = await this.chunks.foldUpTo(into, inbox, this.chunks.chunk);
    const release = this.chunks.hold(inbox);
    try {
      await this.chunks.settled();
      const rest = await this.chunks.foldUpTo(into, inbox, 0);
      const comparison = await compareSpaces(live, scratch.rows, inbox, this.log, this.chunks);
      const { patch } = comparison;
      // The patch and a watermark left below the head, in one transaction; a correct index is not written.
      if (patch !== undefined && (patch.put.length > 0 || patch.remove.length > 0 || live.watermark(inbox) !== rest.watermark)) {
        await this.writes.run(() => {
          void this.rows.db.childTransaction(() => {
            for (const row of patch.remove) live.removeRow(inbox, row);
            for (const row of patch.put) live.putRow(inbox, row);
            if (live.watermark(inbox) !== rest.watermark) live.putWatermark(inbox, rest.watermark);
          });
          this.writer.forget(inbox);
        });
      }
      return { comparison, entries: most.folded + rest.folded, headSeq: rest.watermark };
    } finally {
      release();
    }
  }

  /**
   * Copies the scratch into the engine's space not live (cleared first), brings it up to the
   * head with the inbox held, switches to it with one write, and clears the old space.
   */
  private async switchTo(rebuilt: ConversationRows, scratch: RebuildScratch, inbox: InboxKey): Promise<void> {
    await this.chunks.clear(rebuilt, inbox);
    await this.chunks.copy(scratch.rows, rebuilt, inbox);
    const release = this.chunks.hold(inbox);
    try {
      await this.chunks.settled();
      await this.chunks.foldUpTo(this.chunks.inEngine(rebuilt), inbox, 0);
      await this.writes.run(() => {
        void this.rows.db.childTransaction(() => rebuilt.makeLive(inbox));
        this.writer.forget(inbox);
      });
    } finally {
      release();
    }
    await this.chunks.clear(rebuilt.other, inbox);
  }
}

/**
 * Which rows differ between the live and the rebuilt space (both exact at one head, neither
 * written meanwhile), a page at a time, and the conversations they belong to.
 */
async function compareSpaces(
  live: ConversationRows,
  rebuilt: ConversationRows,
  inbox: InboxKey,
  log: InboxLogDbs,
  chunks: IndexChunks,
): Promise<Comparison> {
  const out: Comparison = { differed: false, changedConversations: new Set(), conversations: 0, patch: { put: [], remove: [] } };
  const note = (row: IndexRow) => {
    out.differed = true;
    const convKey = ConversationRows.convKeyOf(row) ?? convOfSeq(log, inbox, ConversationRows.seqOf(row));
    if (convKey !== undefined) out.changedConversations.add(convKey);
  };
  const patch = (rows: 'put' | 'remove', row: IndexRow) => {
    out.patch?.[rows].push(row);
    if (out.patch !== undefined && out.patch.put.length + out.patch.remove.length > MAX_PATCH_ROWS) out.patch = undefined;
  };
  await eachRow(rebuilt, inbox, chunks, (row) => {
    if (row.table === 'record') out.conversations++;
    const was = live.valueAt(inbox, row);
    if (was !== undefined && JSON.stringify(was) === JSON.stringify(row.value)) return;
    note(row);
    if (was !== undefined) note({ ...row, value: was });
    patch('put', row);
  });
  await eachRow(live, inbox, chunks, (row) => {
    if (rebuilt.valueAt(inbox, row) !== undefined) return;
    note(row);
    patch('remove', row);
  });
  return out;
}

/** Visits the inbox's rows in `rows`' space a page at a time, paced like every chunked job. */
async function eachRow(rows: ConversationRows, inbox: InboxKey, chunks: IndexChunks, visit: (row: IndexRow) => void): Promise<void> {
  for (let after: IndexRow | undefined; ;) {
    const since = performance.now();
    const page = rows.rowsAfter(inbox, after, PAGE_ROWS);
    page.forEach(visit);
    if (page.length < PAGE_ROWS) return;
    after = page[page.length - 1];
    await chunks.pace(since);
  }
}

/** A deleted or edit row belongs to the conversation of its entry, when that is activity. */
function convOfSeq(log: InboxLogDbs, inbox: InboxKey, seq: number | undefined): string | undefined {
  const entry = seq === undefined ? undefined : fromJsonRow(log.entries.get([inbox, seq]));
  return entry !== undefined && isActivity(entry) ? conversationKey(entry.conv) : undefined;
}
