/**
 * Groups and membership windows on CQL. One table, `groups ((grp), member)`: the group record
 * lives in static columns and each member row holds that user's windows, so creating a group
 * with its members is ONE conditional batch on one partition (atomic, and a second create
 * changes nothing). The table is written only by LWTs; every member row carries `op`, the id
 * of the write that last changed it, which is both the compare-and-set token and the way to
 * learn the outcome of a write that timed out. The windows a write stores come from core's
 * openWindow/closeWindow (clamped against stale heads and skewed clocks).
 *
 * `user_groups ((inbox), grp)` (plain writes) indexes groupsOf. It is written before the
 * membership change, so a crash in between leaves a superset: groupsOf may name a group the
 * user never joined (getMembership is then null), never miss one they did.
 *
 * `group_recipients ((grp, sender, appinfo))` (plain writes, each with a TTL) holds the
 * write-fanout snapshots: the recipients a group send took (core's copy-holders.ts).
 */
import {
  KeyedQueue,
  InternalError,
  NotFoundError,
  RECIPIENTS_RETENTION_MS,
  closeWindow,
  inboxKey,
  openWindow,
  splitKey,
  type GroupKey,
  type GroupMessageRef,
  type GroupRecord,
  type GroupStore,
  type InboxKey,
  type Membership,
  type RecipientsRecord,
  type Tier,
  type GroupCreation,
  type GroupUpdate,
  type MembershipChange,
  type MemberRef,
} from '@seqline/core';
import { isUnknownOutcome, mapLimit, newOp, num, optNum, sameOp, str, type Cql, type Statement } from './cql.ts';
import { contentionPause } from './ceilings.ts';
import { groupStatements, type GroupStatements } from './group-statements.ts';
import { fromUdt, nameRevOf, readMemberRows, toUdt, type MemberRow } from './group-rows.ts';

const MAX_ATTEMPTS = 30;
/** Groups are never deleted, so "exists" is cached (bounded: cleared when full). */
const KNOWN_GROUPS_MAX = 100_000;

export class CqlGroupStore implements GroupStore {
  private readonly serial = new KeyedQueue();
  private readonly q: GroupStatements;
  private readonly knownGroups = new Set<string>();

  constructor(private readonly cql: Cql) {
    this.q = groupStatements(cql);
  }

  createGroup({ group, members, at }: GroupCreation): Promise<boolean> {
    return this.serial.run(group.key, async () => {
      if ((await this.getGroup(group.key)) !== null) return false;
      const users = unique(members);
      // Computed (and `at` validated) before the first write.
      const joins = users.map((user) => openWindow(null, user, at));
      await this.indexUserGroups(group.key, users);
      const op = newOp();
      const statements: Statement[] = [
        {
          query: this.q.insertGroup,
          params: [group.key, group.tenant, group.id, group.name, group.admin, group.tier, group.memberCount, group.createdAt, op],
        },
        ...joins.map(({ user, windows }) => ({ query: this.q.insertMember, params: [group.key, user, windows.map(toUdt), true, op] })),
      ];
      try {
        return (await this.cql.lwtBatch(statements)).wasApplied();
      } catch (err) {
        if (!isUnknownOutcome(err)) throw err;
        const row = (await this.cql.serialRead(this.q.readCreatedOp, [group.key])).first();
        return sameOp(row?.get('created_op'), op);
      }
    });
  }

  async getGroup(key: GroupKey): Promise<GroupRecord | null> {
    const row = (await this.cql.read(this.q.readGroup, [key])).first();
    if (row === null || row.get('created_op') === null) return null;
    return {
      key,
      tenant: str(row.get('tenant'), 'tenant'),
      id: str(row.get('id'), 'id'),
      name: str(row.get('name'), 'name'),
      admin: str(row.get('admin'), 'admin'),
      tier: str(row.get('tier'), 'tier') as Tier,
      memberCount: num(row.get('member_count')),
      createdAt: num(row.get('created_at')),
      ...nameRevOf(row),
    };
  }

  /** Setting fixed values is idempotent, so a timed-out update is simply sent again. */
  async updateGroup({ key, patch }: GroupUpdate): Promise<void> {
    const fields = (['name', 'tier', 'memberCount'] as const).filter((field) => patch[field] !== undefined);
    if (fields.length === 0) {
      if ((await this.getGroup(key)) === null) throw new NotFoundError(`no group ${key}`);
      return;
    }
    const query = this.q.updateGroup(fields);
    const params = [...fields.map((field) => patch[field]), key];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        if (!(await this.cql.lwt(query, params)).wasApplied()) throw new NotFoundError(`no group ${key}`);
        return;
      } catch (err) {
        if (!isUnknownOutcome(err)) throw err;
        await contentionPause(attempt);
      }
    }
    throw new InternalError(`updateGroup ${key}: gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * A compare-and-set on the record's name_rev: a concurrent rename (any process) makes it fail,
   * and it is read again and tried with the next revision. After a write of unknown outcome, a
   * revision that is ours, or that a newer rename has outranked anyway, is safe to announce.
   */
  renameGroup(input: { key: GroupKey; name: string }): Promise<{ nameRev: number }> {
    const { key, name } = input;
    return this.serial.run(key, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const row = (await this.cql.serialRead(this.q.readName, [key])).first();
        const createdOp: unknown = row?.get('created_op');
        if (row === null || createdOp === null || createdOp === undefined) throw new NotFoundError(`no group ${key}`);
        const stored: unknown = row.get('name_rev');
        const nameRev = (optNum(stored) ?? 0) + 1;
        try {
          if ((await this.cql.lwt(this.q.casName, [name, nameRev, key, createdOp, stored ?? null])).wasApplied()) return { nameRev };
        } catch (err) {
          if (!isUnknownOutcome(err)) throw err;
          const after = (await this.cql.serialRead(this.q.readName, [key])).first();
          const now = optNum(after?.get('name_rev')) ?? 0;
          if ((now === nameRev && after?.get('name') === name) || now > nameRev) return { nameRev };
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`renameGroup ${key}: gave up after ${MAX_ATTEMPTS} contended attempts`);
    });
  }

  addMembers({ key, users, at }: MembershipChange): Promise<string[]> {
    return this.change(key, unique(users), (user, row) => {
      if (row?.isMember === true) return null;
      const joined = openWindow(row === undefined ? null : { user, windows: row.windows }, user, at);
      return { windows: joined.windows, isMember: true };
    });
  }

  removeMembers({ key, users, at }: MembershipChange): Promise<string[]> {
    return this.change(key, unique(users), (user, row) => {
      if (row?.isMember !== true) return null;
      return { windows: closeWindow({ user, windows: row.windows }, at).windows, isMember: false };
    });
  }

  async getMembership({ key, user }: MemberRef): Promise<Membership | null> {
    const row = (await this.cql.read(this.q.readMember, [key, user])).first();
    const windows: unknown = row?.get('windows');
    return Array.isArray(windows) ? { user, windows: windows.map(fromUdt) } : null;
  }

  async listMembers(key: GroupKey): Promise<string[]> {
    const rows = await this.cql.readAll(this.q.listMembers, [key]);
    return rows
      .filter((row) => row.get('is_member') === true)
      .map((row) => str(row.get('member'), 'member'))
      .sort();
  }

  async listMemberships(key: GroupKey): Promise<Membership[]> {
    const rows = await this.cql.readAll(this.q.readAllMembers, [key]);
    return rows
      .filter((row) => row.get('is_member') === true)
      .map((row) => {
        const windows: unknown = row.get('windows');
        return { user: str(row.get('member'), 'member'), windows: Array.isArray(windows) ? windows.map(fromUdt) : [] };
      })
      .sort((x, y) => (x.user < y.user ? -1 : x.user > y.user ? 1 : 0));
  }

  async groupsOf(inbox: InboxKey): Promise<GroupKey[]> {
    const rows = await this.cql.readAll(this.q.groupsOf, [inbox]);
    return rows.map((row) => str(row.get('grp'), 'grp') as GroupKey).sort();
  }

  /** A plain write (the table is never written by LWT), with the retention as its TTL. */
  async recordRecipients(input: RecipientsRecord): Promise<void> {
    const ttl = Math.ceil(RECIPIENTS_RETENTION_MS / 1000);
    await this.cql.write(this.q.recordRecipients, [input.key, input.sender, input.appinfo, input.sendTime, [...input.recipients], ttl]);
  }

  async recordedRecipients(input: GroupMessageRef): Promise<string[] | null> {
    const row = (await this.cql.read(this.q.readRecipients, [input.key, input.sender, input.appinfo, input.sendTime])).first();
    if (row === null) return null;
    const list: unknown = row.get('recipients');
    // An empty list is stored as null: a snapshot of nobody (a group of one) reads back as [].
    return Array.isArray(list) ? list.map((u) => str(u, 'recipient')) : [];
  }

  /**
   * Compare-and-set of the member rows `decide` changes, all in one conditional batch: a row
   * that changed since it was read fails the whole batch, which is then re-read and re-decided.
   * The first try reads at the plain consistency (cheap; the CAS catches anything stale), the
   * retries read serially. Returns the users whose row this call changed.
   */
  private change(
    key: GroupKey,
    users: string[],
    decide: (user: string, row: MemberRow | undefined) => Omit<MemberRow, 'op'> | null,
  ): Promise<string[]> {
    return this.serial.run(key, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const serial = attempt > 0;
        const [exists, rows] = await Promise.all([this.exists(key, serial), readMemberRows(this.cql, this.q, key, users, serial)]);
        if (!exists) throw new NotFoundError(`no group ${key}`);
        const changes = users.flatMap((user) => {
          const next = decide(user, rows.get(user));
          return next === null ? [] : [{ user, next, before: rows.get(user) }];
        });
        if (changes.length === 0) return [];
        const joining = changes.filter(({ next }) => next.isMember).map(({ user }) => user);
        await this.indexUserGroups(key, joining);
        const op = newOp();
        const statements = changes.map(({ user, next, before }) =>
          before === undefined
            ? { query: this.q.insertMemberIfNew, params: [key, user, next.windows.map(toUdt), next.isMember, op] }
            : { query: this.q.casMember, params: [next.windows.map(toUdt), next.isMember, op, key, user, before.op] },
        );
        try {
          if ((await this.cql.lwtBatch(statements)).wasApplied()) return changes.map(({ user }) => user);
        } catch (err) {
          if (!isUnknownOutcome(err)) throw err;
          const after = await readMemberRows(
            this.cql,
            this.q,
            key,
            changes.map(({ user }) => user),
            true,
          );
          if (changes.every(({ user }) => sameOp(after.get(user)?.op, op))) return changes.map(({ user }) => user);
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`membership of ${key}: gave up after ${MAX_ATTEMPTS} contended attempts`);
    });
  }

  private async exists(key: GroupKey, serial: boolean): Promise<boolean> {
    if (this.knownGroups.has(key)) return true;
    const result = serial ? await this.cql.serialRead(this.q.readCreatedOp, [key]) : await this.cql.read(this.q.readCreatedOp, [key]);
    const row = result.first();
    const found = row !== null && row.get('created_op') !== null;
    if (found) {
      if (this.knownGroups.size >= KNOWN_GROUPS_MAX) this.knownGroups.clear();
      this.knownGroups.add(key);
    }
    return found;
  }

  private async indexUserGroups(key: GroupKey, users: string[]): Promise<void> {
    const { tenant } = splitKey(key);
    await mapLimit(users, 64, (user) => this.cql.write(this.q.insertUserGroup, [inboxKey(tenant, user), key]));
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
