/** CQL of the group store (tables `groups`, `user_groups`, `group_recipients`; see groups.ts for the model). */
import type { Cql } from './cql.ts';

export interface GroupStatements {
  readGroup: string;
  readCreatedOp: string;
  insertGroup: string;
  insertMember: string;
  insertMemberIfNew: string;
  casMember: string;
  readMember: string;
  readMembers: string;
  readAllMembers: string;
  listMembers: string;
  insertUserGroup: string;
  groupsOf: string;
  recordRecipients: string;
  readRecipients: string;
  readName: string;
  casName: string;
  updateGroup(fields: ReadonlyArray<'name' | 'tier' | 'memberCount'>): string;
}

const FIELD_COLUMNS = { name: 'name', tier: 'tier', memberCount: 'member_count' } as const;

export function groupStatements(cql: Cql): GroupStatements {
  const groups = cql.table('groups');
  const userGroups = cql.table('user_groups');
  const recipients = cql.table('group_recipients');
  return {
    readGroup: `SELECT tenant, id, name, name_rev, admin, tier, member_count, created_at, created_op FROM ${groups} WHERE grp = ? LIMIT 1`,
    readCreatedOp: `SELECT created_op FROM ${groups} WHERE grp = ? LIMIT 1`,
    // Static-only insert: the condition is on the group record, not on any member row.
    insertGroup: `INSERT INTO ${groups} (grp, tenant, id, name, admin, tier, member_count, created_at, created_op) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
    // Unconditional, but only ever sent inside the conditional create batch (so through Paxos).
    insertMember: `INSERT INTO ${groups} (grp, member, windows, is_member, op) VALUES (?, ?, ?, ?, ?)`,
    insertMemberIfNew: `INSERT INTO ${groups} (grp, member, windows, is_member, op) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS`,
    casMember: `UPDATE ${groups} SET windows = ?, is_member = ?, op = ? WHERE grp = ? AND member = ? IF op = ?`,
    readMember: `SELECT windows FROM ${groups} WHERE grp = ? AND member = ?`,
    readMembers: `SELECT member, windows, is_member, op FROM ${groups} WHERE grp = ? AND member IN ?`,
    readAllMembers: `SELECT member, windows, is_member, op FROM ${groups} WHERE grp = ?`,
    listMembers: `SELECT member, is_member FROM ${groups} WHERE grp = ?`,
    insertUserGroup: `INSERT INTO ${userGroups} (inbox, grp) VALUES (?, ?)`,
    groupsOf: `SELECT grp FROM ${userGroups} WHERE inbox = ?`,
    recordRecipients: `INSERT INTO ${recipients} (grp, sender, appinfo, send_time, recipients) VALUES (?, ?, ?, ?, ?) USING TTL ?`,
    readRecipients: `SELECT recipients FROM ${recipients} WHERE grp = ? AND sender = ? AND appinfo = ? AND send_time = ?`,
    readName: `SELECT name, name_rev, created_op FROM ${groups} WHERE grp = ? LIMIT 1`,
    // name_rev is null until the first rename; created_op in the condition keeps the CAS from making a record out of nothing.
    casName: `UPDATE ${groups} SET name = ?, name_rev = ? WHERE grp = ? IF created_op = ? AND name_rev = ?`,
    updateGroup: (fields) =>
      `UPDATE ${groups} SET ${fields.map((field) => `${FIELD_COLUMNS[field]} = ?`).join(', ')} WHERE grp = ? IF EXISTS`,
  };
}
