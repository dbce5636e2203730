/**
 * Ports of groups (libs/store): membership and read-fanout group streams, split from ports.ts;
 * the package entry exports both.
 */
import type { DedupKey } from './dedup-key.ts';
import type { Entry, StoredOutcome } from './entry.ts';
import type { GroupKey, InboxKey } from './ids.ts';
import type { Tier } from './tiers.ts';
import type { WriteGuard } from './ports.ts';

export interface GroupRecord {
  key: GroupKey;
  tenant: string;
  id: string;
  name: string;
  /**
   * Counts the renames (absent: 0, the name given at creation). Every group notice carries it
   * with the name, so each member's conversation title ends on the newest name, whatever order
   * the notices reach the inbox in (core's titleWins).
   */
  nameRev?: number;
  /** The creator; may recall others' messages. */
  admin: string;
  tier: Tier;
  memberCount: number;
  createdAt: number;
}

/** One stretch of membership. gseqs bound what a read-fanout member may read. */
export interface MemberWindow {
  joinedAt: number;
  /** Group stream head when the member joined: sees gseq > fromGseq. */
  fromGseq: number;
  removedAt?: number;
  /** Group stream head when removed: sees gseq <= toGseq. */
  toGseq?: number;
}

export interface Membership {
  user: string;
  windows: MemberWindow[];
}

export interface MembershipChangeAt {
  time: number;
  gseq: number;
}

/** GroupStore.createGroup: the record, its initial members, and when they joined. */
export interface GroupCreation {
  group: GroupRecord;
  members: string[];
  at: MembershipChangeAt;
}

/** GroupStore.updateGroup: the fields of the record to change. */
export interface GroupUpdate {
  key: GroupKey;
  patch: Partial<Pick<GroupRecord, 'name' | 'tier' | 'memberCount'>>;
}

/** GroupStore.addMembers / removeMembers: who joins or leaves, and when (a window bound). */
export interface MembershipChange {
  key: GroupKey;
  users: string[];
  at: MembershipChangeAt;
}

/** One user's membership of a group (GroupStore.getMembership). */
export interface MemberRef {
  key: GroupKey;
  user: string;
}

export interface GroupStore {
  /** Creates the group with its initial members; false when the key already exists. */
  createGroup(input: GroupCreation): Promise<boolean>;
  getGroup(key: GroupKey): Promise<GroupRecord | null>;
  updateGroup(input: GroupUpdate): Promise<void>;
  /**
   * Sets the group's name and increments its nameRev, atomically: concurrent renames (from any
   * process) each get a revision of their own, and the record keeps the highest one's name.
   * Returns the new revision; NotFoundError when the group does not exist.
   */
  renameGroup(input: { key: GroupKey; name: string }): Promise<{ nameRev: number }>;
  /** Opens a window for each user not currently a member; returns the users actually added. */
  addMembers(input: MembershipChange): Promise<string[]>;
  /** Closes the open window of each current member; returns the users actually removed. */
  removeMembers(input: MembershipChange): Promise<string[]>;
  /** The user's windows in the group, null when the user was never a member. */
  getMembership(input: MemberRef): Promise<Membership | null>;
  /** Current members (open window), sorted. */
  listMembers(key: GroupKey): Promise<string[]>;
  /**
   * Current members (open window) with all their windows, sorted by user: what a push to every
   * member needs in one read instead of one per member.
   */
  listMemberships(key: GroupKey): Promise<Membership[]>;
  /** Groups this user has ever been a member of (any window), as group keys. */
  groupsOf(inbox: InboxKey): Promise<GroupKey[]>;
  /**
   * Records the recipients a write-fanout send of `sender`'s message `appinfo` snapshot (core's
   * copy-holders.ts), before its fanout job is enqueued. Keyed by the attempt's `sendTime` too:
   * each attempt records beside its own copy's append, and the copy that was stored (its
   * sendTime) names the record that counts. Idempotent: the same record again replaces it.
   * Kept at least RECIPIENTS_RETENTION_MS after `sendTime`.
   */
  recordRecipients(input: RecipientsRecord): Promise<void>;
  /** The recipients recorded for that message, null when none is (any more). */
  recordedRecipients(input: GroupMessageRef): Promise<string[] | null>;
}

/**
 * A message of a group, as the write-fanout snapshots name it: appinfos are unique per sender,
 * and the send time tells the attempt whose copy was stored from a resend's.
 */
export interface GroupMessageRef {
  key: GroupKey;
  sender: string;
  appinfo: string;
  sendTime: number;
}

/** The recipients a write-fanout send took (GroupStore.recordRecipients). */
export interface RecipientsRecord extends GroupMessageRef {
  recipients: readonly string[];
}

/** One append to a group stream (GroupStreamStoreWriter.append); forwarded whole, like TimelineAppend. */
export interface GroupStreamAppend {
  group: GroupKey;
  /** Gseqs already allocated by the stream's single writer, ascending. */
  entries: Entry[];
  /** Runs before every write round trip the append makes (see WriteGuard). */
  guard?: WriteGuard;
}

/** The writing half of a group stream store: what a write decorator (a fence) wraps. */
export interface GroupStreamStoreWriter {
  /** Same contract as TimelineWriter.append, on (group, gseq); a stream keeps no conversation index. */
  append(input: GroupStreamAppend): Promise<StoredOutcome[]>;
}

/** A page of a group stream after a gseq (GroupStreamReader.readAfter). */
export interface GroupPageAfter {
  group: GroupKey;
  afterGseq: number;
  limit: number;
}

/** A page of a group stream before a gseq (GroupStreamReader.readBefore). */
export interface GroupPageBefore {
  group: GroupKey;
  beforeGseq: number;
  limit: number;
}

/** A member's read cursor in a group stream (GroupStreamReader.getCursor). */
export interface GroupCursorRef {
  group: GroupKey;
  inbox: InboxKey;
}

/** A member's read cursor to raise to `gseq` (GroupStreamReader.setCursor). */
export interface GroupCursor extends GroupCursorRef {
  gseq: number;
}

/**
 * The reading half of a group stream store, with the members' read cursors: a cursor belongs
 * to its reader (set by whoever serves that user, compare-and-raise in the store), not to the
 * stream's single writer, so a write fence leaves it alone too.
 */
export interface GroupStreamReader {
  /** key → gseq for those of `keys` stored in this stream (see TimelineStore.findSeqs). */
  findSeqs(input: { group: GroupKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>>;
  /** Entries with gseq > afterGseq, ascending, at most limit. */
  readAfter(input: GroupPageAfter): Promise<Entry[]>;
  /** Entries with gseq < beforeGseq, descending, at most limit. */
  readBefore(input: GroupPageBefore): Promise<Entry[]>;
  headSeq(group: GroupKey): Promise<number>;
  /** Per-user read cursor in a group stream; only moves forward. Returns the stored cursor. */
  setCursor(input: GroupCursor): Promise<number>;
  /** The member's read cursor in the group stream, 0 when never set. */
  getCursor(input: GroupCursorRef): Promise<number>;
  /** Every cursor set in the group, by inbox (who has read how far: one read for a read count). */
  listCursors(group: GroupKey): Promise<Map<InboxKey, number>>;
}

/** Read-fanout group streams: one copy per message, numbered by gseq. */
export interface GroupStreamStore extends GroupStreamReader, GroupStreamStoreWriter {}
