/**
 * Write-fanout snapshots on LMDB (GroupStore.recordRecipients): the recipients a group send
 * took, by message and attempt, read back by a resend, a recall and an edit. Kept
 * RECIPIENTS_RETENTION_MS past the send time: each record prunes a bounded number of expired
 * ones (the key starts with the group, so a send-time index finds them), so the table holds
 * about one retention's worth of sends.
 */
import type { Database } from 'lmdb';
import { RECIPIENTS_RETENTION_MS, type GroupMessageRef, type RecipientsRecord } from '@seqline/core';
import type { WriteBatcher } from './write-batcher.ts';

export type RecipientsKey = [group: string, sender: string, appinfo: string, sendTime: number];
export type RecipientsTimeKey = [sendTime: number, group: string, sender: string, appinfo: string];

export interface RecipientsDbs {
  recipients: Database<string[], RecipientsKey>;
  recipientsByTime: Database<true, RecipientsTimeKey>;
}

/** Expired snapshots removed per record at most: the pruning keeps pace with the sends. */
const PRUNE_PER_RECORD = 8;

export class LmdbRecipients {
  constructor(
    private readonly dbs: RecipientsDbs,
    private readonly writes: WriteBatcher,
  ) {}

  async record(input: RecipientsRecord): Promise<void> {
    const { key, sender, appinfo, sendTime } = input;
    const recipients = [...input.recipients];
    await this.writes.run(() => {
      this.dbs.recipients.put([key, sender, appinfo, sendTime], recipients);
      this.dbs.recipientsByTime.put([sendTime, key, sender, appinfo], true);
      this.prune(sendTime - RECIPIENTS_RETENTION_MS);
    });
  }

  async recorded(input: GroupMessageRef): Promise<string[] | null> {
    return this.dbs.recipients.get([input.key, input.sender, input.appinfo, input.sendTime]) ?? null;
  }

  /** Inside a write transaction: drops a few snapshots sent before `before`. */
  private prune(before: number): void {
    if (before <= 0) return;
    for (const k of Array.from(this.dbs.recipientsByTime.getKeys({ start: [0], end: [before], limit: PRUNE_PER_RECORD }))) {
      const [sendTime, group, sender, appinfo] = k;
      this.dbs.recipientsByTime.remove(k);
      this.dbs.recipients.remove([group, sender, appinfo, sendTime]);
    }
  }
}
