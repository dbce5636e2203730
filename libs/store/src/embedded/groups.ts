/**
 * Groups and membership windows on LMDB. Every mutation is one batched write, so
 * concurrent add/remove calls for a group are applied one at a time (no double windows).
 * The windows themselves come from core's openWindow/closeWindow (clamped against stale
 * heads and skewed clocks); this store only persists them.
 */
import type { Database } from 'lmdb';
import {
  NotFoundError,
  closeWindow,
  inboxKey,
  openWindow,
  splitKey,
  type GroupKey,
  type GroupMessageRef,
  type GroupRecord,
  type GroupStore,
  type InboxKey,
  type MemberWindow,
  type Membership,
  type MembershipChangeAt,
  type RecipientsRecord,
  type GroupCreation,
  type GroupUpdate,
  type MembershipChange,
  type MemberRef,
} from '@seqline/core';
import { MAX_KEY_STRING } from './keys.ts';
import { LmdbRecipients, type RecipientsDbs } from './group-recipients.ts';
import type { WriteBatcher } from './write-batcher.ts';

export type { RecipientsKey, RecipientsTimeKey } from './group-recipients.ts';

type MemberKey = [group: string, user: string];

export interface GroupDbs extends RecipientsDbs {
  groups: Database<GroupRecord, string>;
  /** Every window a user ever had in a group, oldest first. */
  members: Database<MemberWindow[], MemberKey>;
  /** Present while the user's last window is open: listMembers is a prefix scan. */
  currentMembers: Database<true, MemberKey>;
  /** [inbox, group]: groupsOf is a prefix scan. */
  userGroups: Database<true, [inbox: string, group: string]>;
}

export class LmdbGroupStore implements GroupStore {
  private readonly recipients: LmdbRecipients;

  constructor(
    private readonly dbs: GroupDbs,
    private readonly writes: WriteBatcher,
  ) {
    this.recipients = new LmdbRecipients(dbs, writes);
  }

  async createGroup({ group, members, at }: GroupCreation): Promise<boolean> {
    return this.writes.run(() => {
      if (this.dbs.groups.doesExist(group.key)) return false;
      // Every window is computed (and `at` validated) before the first write: see WriteBatcher.
      const joins = unique(members).map((user) => this.opened(group.key, user, at));
      this.dbs.groups.put(group.key, group);
      for (const join of joins) this.putOpened(group.key, join);
      return true;
    });
  }

  async getGroup(key: GroupKey): Promise<GroupRecord | null> {
    return this.dbs.groups.get(key) ?? null;
  }

  async updateGroup({ key, patch }: GroupUpdate): Promise<void> {
    await this.writes.run(() => {
      const current = this.requireGroup(key);
      const next: GroupRecord = { ...current };
      if (patch.name !== undefined) next.name = patch.name;
      if (patch.tier !== undefined) next.tier = patch.tier;
      if (patch.memberCount !== undefined) next.memberCount = patch.memberCount;
      this.dbs.groups.put(key, next);
    });
  }

  async renameGroup(input: { key: GroupKey; name: string }): Promise<{ nameRev: number }> {
    return this.writes.run(() => {
      const current = this.requireGroup(input.key);
      const nameRev = (current.nameRev ?? 0) + 1;
      this.dbs.groups.put(input.key, { ...current, name: input.name, nameRev });
      return { nameRev };
    });
  }

  async addMembers({ key, users, at }: MembershipChange): Promise<string[]> {
    return this.writes.run(() => {
      this.requireGroup(key);
      const fresh = unique(users).filter((user) => !this.dbs.currentMembers.doesExist([key, user]));
      const joins = fresh.map((user) => this.opened(key, user, at));
      for (const join of joins) this.putOpened(key, join);
      return fresh;
    });
  }

  async removeMembers({ key, users, at }: MembershipChange): Promise<string[]> {
    return this.writes.run(() => {
      this.requireGroup(key);
      const leaving = unique(users).filter((user) => this.dbs.currentMembers.doesExist([key, user]));
      const leaves = leaving.map((user) => ({ user, left: closeWindow(this.membership(key, user), at) }));
      for (const { user, left } of leaves) this.putClosed(key, user, left);
      return leaving;
    });
  }

  async getMembership({ key, user }: MemberRef): Promise<Membership | null> {
    return this.membership(key, user);
  }

  async listMembers(key: GroupKey): Promise<string[]> {
    const keys = this.dbs.currentMembers.getKeys({ start: [key, ''], end: [key, MAX_KEY_STRING] });
    return Array.from(keys, ([, user]) => user);
  }

  async listMemberships(key: GroupKey): Promise<Membership[]> {
    return (await this.listMembers(key)).map((user) => ({ user, windows: this.dbs.members.get([key, user]) ?? [] }));
  }

  async groupsOf(inbox: InboxKey): Promise<GroupKey[]> {
    const keys = this.dbs.userGroups.getKeys({ start: [inbox, ''], end: [inbox, MAX_KEY_STRING] });
    return Array.from(keys, ([, group]) => group as GroupKey);
  }

  recordRecipients(input: RecipientsRecord): Promise<void> {
    return this.recipients.record(input);
  }

  recordedRecipients(input: GroupMessageRef): Promise<string[] | null> {
    return this.recipients.recorded(input);
  }

  /** Inside a write transaction. */
  private requireGroup(key: GroupKey): GroupRecord {
    const group = this.dbs.groups.get(key);
    if (group === undefined) throw new NotFoundError(`no group ${key}`);
    return group;
  }

  private membership(key: string, user: string): Membership | null {
    const windows = this.dbs.members.get([key, user]);
    return windows === undefined ? null : { user, windows };
  }

  /** The user's windows with a new open one; throws BadRequestError for a malformed `at`. */
  private opened(key: string, user: string, at: MembershipChangeAt): Membership {
    return openWindow(this.membership(key, user), user, at);
  }

  /** Inside a write transaction; the caller checked the user had no open window. */
  private putOpened(key: string, joined: Membership): void {
    this.dbs.members.put([key, joined.user], joined.windows);
    this.dbs.currentMembers.put([key, joined.user], true);
    this.dbs.userGroups.put([inboxKey(splitKey(key).tenant, joined.user), key], true);
  }

  /** Inside a write transaction; the caller checked the user had an open window. */
  private putClosed(key: string, user: string, left: Membership | null): void {
    if (left !== null) this.dbs.members.put([key, user], left.windows);
    this.dbs.currentMembers.remove([key, user]);
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
