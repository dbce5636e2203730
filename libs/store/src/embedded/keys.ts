/**
 * Key layout of the embedded engine. Keys are ordered-binary arrays, so a prefix such as
 * `[inbox]` bounds a range scan and numeric parts sort numerically (seq 9 before seq 10).
 */
/** Upper bound for numeric key parts: every seq, gseq and timestamp is a safe integer. */
export const MAX_KEY_NUMBER = Number.MAX_SAFE_INTEGER;

/** Named sub-databases of the one LMDB environment. */
export const DB_NAMES = {
  timeline: 'timeline', // [inbox, seq] → Entry
  timelineAppinfo: 'timeline_appinfo', // [inbox, dedupKeyOf(entry)] → seq
  timelineReaders: 'timeline_readers', // [inbox, seq] → sorted reader ids
  groupStream: 'group_stream', // [group, gseq] → Entry
  groupAppinfo: 'group_appinfo', // [group, dedupKeyOf(entry)] → gseq
  groupCursors: 'group_cursors', // [group, inbox] → gseq
  storeMeta: 'store_meta', // name → layout version (migrate-dedup-keys.ts)
  groups: 'groups', // group key → GroupRecord
  members: 'group_members', // [group, user] → MemberWindow[]
  currentMembers: 'group_current', // [group, user] → true while a window is open
  userGroups: 'user_groups', // [inbox, group] → true once ever a member
  recipients: 'group_recipients', // [group, sender, appinfo, sendTime] → recipients: a write-fanout snapshot
  recipientsByTime: 'group_recipients_time', // [sendTime, group, sender, appinfo] → true (pruned when expired)
  epochs: 'seq_epochs', // scope → last epoch handed out
  epochReleases: 'seq_epoch_releases', // scope → { epoch, atMs }: the last clean release recorded
  ceilings: 'seq_ceilings', // section → { ceiling, epoch }
  jobs: 'jobs', // id → StoredJob (pending)
  jobOrder: 'job_order', // [createdAt, id] → true (pending, oldest first)
  jobQueueOrder: 'job_queue_order', // [queue, createdAt, id] → true
  deadJobs: 'jobs_dead', // id → StoredJob
  deadOrder: 'jobs_dead_order', // [createdAt, id] → true
  // The conversation index of each inbox (conversation-dbs.ts), written with the inbox's entries:
  // one sub-database, rows keyed [inbox, tag, …] so an append's rows share pages.
  //   [inbox, 'r', convKey] → record numbers · [inbox, 'o', lastSeq] → convKey (the list)
  //   [inbox, 'i', convKey, seq] → item flags (visible; counted, mention) · [inbox, 'd', seq] → true
  //   [inbox, 'e', seq] → EditRef (JSON row) · [inbox, 'w'] → seq the index is exact at
  //   The same rows under upper-case tags are the inbox's other space; [inbox, 'g'] → 1 while
  //   that one is live (a rebuild builds the space not live, then switches: conversation-dbs.ts).
  conversations: 'conv_index',
} as const;

export const DB_COUNT = Object.keys(DB_NAMES).length;

/** Sorts after every string key part (used as the end of a `[prefix, string]` range). */
export const MAX_KEY_STRING = '\u{10FFFF}';

/** Largest UTF-8 size of a string used inside a key; LMDB keys are limited to ~2 KB. */
export const MAX_KEY_PART_BYTES = 512;
