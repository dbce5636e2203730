/**
 * The rows of the `groups` table as the group store (groups.ts) reads and writes them: member
 * rows with their windows (a UDT list), and the record's rename revision.
 */
import type { GroupKey, GroupRecord, MemberWindow } from '@seqline/core';
import type { types } from 'cassandra-driver';
import { chunks, num, optNum, str, type Cql, type Row } from './cql.ts';
import type { GroupStatements } from './group-statements.ts';

export interface MemberRow {
  windows: MemberWindow[];
  isMember: boolean;
  op: types.Uuid;
}

/** Above this many users a change reads the whole partition instead of IN lists. */
const WHOLE_PARTITION_ABOVE = 200;

/** The users' member rows; `serial` makes it a Paxos read, which also settles in-flight LWTs. */
export async function readMemberRows(
  cql: Cql,
  q: GroupStatements,
  key: GroupKey,
  users: string[],
  serial: boolean,
): Promise<Map<string, MemberRow>> {
  const readChunk = (chunk: string[]) => (serial ? cql.serialRead(q.readMembers, [key, chunk]) : cql.read(q.readMembers, [key, chunk]));
  const rows: Row[] =
    users.length > WHOLE_PARTITION_ABOVE
      ? await cql.readAll(q.readAllMembers, [key], { serial })
      : (await Promise.all(chunks(users, 100).map(readChunk))).flatMap((r) => r.rows);
  const out = new Map<string, MemberRow>();
  for (const row of rows) {
    const windows: unknown = row.get('windows');
    const op: unknown = row.get('op');
    if (!Array.isArray(windows) || op === null) continue;
    out.set(str(row.get('member'), 'member'), {
      windows: windows.map(fromUdt),
      isMember: row.get('is_member') === true,
      op: op as types.Uuid,
    });
  }
  return out;
}

interface WindowUdt {
  joined_at: unknown;
  from_gseq: unknown;
  removed_at?: unknown;
  to_gseq?: unknown;
}

export function toUdt(window: MemberWindow): WindowUdt {
  return { joined_at: window.joinedAt, from_gseq: window.fromGseq, removed_at: window.removedAt ?? null, to_gseq: window.toGseq ?? null };
}

export function fromUdt(value: unknown): MemberWindow {
  const udt = value as WindowUdt;
  const window: MemberWindow = { joinedAt: num(udt.joined_at), fromGseq: num(udt.from_gseq) };
  const removedAt = optNum(udt.removed_at);
  const toGseq = optNum(udt.to_gseq);
  if (removedAt !== undefined) window.removedAt = removedAt;
  if (toGseq !== undefined) window.toGseq = toGseq;
  return window;
}

/** `nameRev` when the group was ever renamed (name_rev is null until then). */
export function nameRevOf(row: Row): Pick<GroupRecord, 'nameRev'> {
  const nameRev = optNum(row.get('name_rev'));
  return nameRev === undefined ? {} : { nameRev };
}
