/**
 * Groups and membership windows on LMDB. Every mutation is one batched write, so
 * concurrent add/remove calls for a group are applied one at a time (no double windows).
 */
import type { Database } from 'lmdb';
import {
  NotFoundError, inboxKey, splitKey,
  type GroupKey, type GroupRecord, type GroupStore, type InboxKey, type MemberWindow,
  type Membership, type MembershipChangeAt,
} from '@seqline/core';
import { MAX_KEY_STRING } from './keys.ts';
import type { WriteBatcher } from './write-batcher.ts';

type MemberKey = [group: string, user: string];

export interface GroupDbs {
  groups: Database<GroupRecord, string>;
  /** Every window a user ever had in a group, oldest first. */
  members: Database<MemberWindow[], MemberKey>;
  /** Present while the user's last window is open: listMembers is a prefix scan. */
  currentMembers: Database<true, MemberKey>;
  /** [inbox, group]: groupsOf is a prefix scan. */
  userGroups: Database<true, [inbox: string, group: string]>;
}

export class LmdbGroupStore implements GroupStore {
  constructor(
    private readonly dbs: GroupDbs,
    private readonly writes: WriteBatcher,
  ) {}

  async createGroup(group: GroupRecord, members: string[], at: MembershipChangeAt): Promise<boolean> {
    return this.writes.run(() => {
      if (this.dbs.groups.doesExist(group.key)) return false;
      this.dbs.groups.put(group.key, group);
      for (const user of unique(members)) this.openWindow(group.key, user, at);
      return true;
    });
  }

  async getGroup(key: GroupKey): Promise<GroupRecord | null> {
    return this.dbs.groups.get(key) ?? null;
  }

  async updateGroup(key: GroupKey, patch: Partial<Pick<GroupRecord, 'name' | 'tier' | 'memberCount'>>): Promise<void> {
    await this.writes.run(() => {
      const current = this.requireGroup(key);
      const next: GroupRecord = { ...current };
      if (patch.name !== undefined) next.name = patch.name;
      if (patch.tier !== undefined) next.tier = patch.tier;
      if (patch.memberCount !== undefined) next.memberCount = patch.memberCount;
      this.dbs.groups.put(key, next);
    });
  }

  async addMembers(key: GroupKey, users: string[], at: MembershipChangeAt): Promise<string[]> {
    return this.writes.run(() => {
      this.requireGroup(key);
      const fresh = unique(users).filter((user) => !this.dbs.currentMembers.doesExist([key, user]));
      for (const user of fresh) this.openWindow(key, user, at);
      return fresh;
    });
  }

  async removeMembers(key: GroupKey, users: string[], at: MembershipChangeAt): Promise<string[]> {
    return this.writes.run(() => {
      this.requireGroup(key);
      const leaving = unique(users).filter((user) => this.dbs.currentMembers.doesExist([key, user]));
      for (const user of leaving) this.closeWindow(key, user, at);
      return leaving;
    });
  }

  async getMembership(key: GroupKey, user: string): Promise<Membership | null> {
    const windows = this.dbs.members.get([key, user]);
    return windows === undefined ? null : { user, windows };
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

  /** Inside a write transaction. */
  private requireGroup(key: GroupKey): GroupRecord {
    const group = this.dbs.groups.get(key);
    if (group === undefined) throw new NotFoundError(`no group ${key}`);
    return group;
  }

  /** Inside a write transaction; the caller checked the user has no open window. */
  private openWindow(key: string, user: string, at: MembershipChangeAt): void {
    const windows = this.dbs.members.get([key, user]) ?? [];
    this.dbs.members.put([key, user], [...windows, { joinedAt: at.time, fromGseq: at.gseq }]);
    this.dbs.currentMembers.put([key, user], true);
    this.dbs.userGroups.put([inboxKey(splitKey(key).tenant, user), key], true);
  }

  /** Inside a write transaction; the caller checked the user has an open window. */
  private closeWindow(key: string, user: string, at: MembershipChangeAt): void {
    const windows = this.dbs.members.get([key, user]) ?? [];
    const last = windows.at(-1);
    if (last !== undefined && last.removedAt === undefined) {
      const closed: MemberWindow = { ...last, removedAt: at.time, toGseq: at.gseq };
      this.dbs.members.put([key, user], [...windows.slice(0, -1), closed]);
    }
    this.dbs.currentMembers.remove([key, user]);
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
