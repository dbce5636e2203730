/**
 * The conversation index's row codec (the tables' layout is in conversation-tables.ts): records
 * ⇄ conv_records / conv_list rows, stored edits, and the check that an entry's conversation can
 * be stored as sent.
 */
import {
  BadRequestError,
  InternalError,
  conversationKey,
  hasLoneSurrogate,
  type ConvRecord,
  type EditRef,
  type Entry,
} from '@seqline/core';
import { types } from 'cassandra-driver';
import { num, optNum, optStr, str, type Row } from './cql.ts';

const CONV_TYPES = ['user', 'group'] as const;

/**
 * Refuses, before anything is stored, an entry whose conversation the index's text columns
 * cannot hold as sent: CQL text is UTF-8, so an unpaired surrogate would come back as U+FFFD
 * and the record would name another conversation than its entries. The edges never let one
 * through (ID_PATTERN); this keeps a buggy writer from splitting inbox and index.
 */
export function assertIndexable(entry: Entry): void {
  const conv: unknown = entry.conv;
  if (typeof conv !== 'object' || conv === null) throw new BadRequestError('entry without conv');
  const { type, id } = conv as Record<string, unknown>;
  if (typeof type !== 'string' || !(CONV_TYPES as readonly string[]).includes(type)) {
    throw new BadRequestError(`conv.type must be user or group, got ${String(type)}`);
  }
  if (typeof id !== 'string' || id.length === 0) throw new BadRequestError('conv.id must be a non-empty string');
  if (hasLoneSurrogate(id)) throw new BadRequestError('conv.id holds an unpaired UTF-16 surrogate');
}

/** A record from a row of conv_records or conv_list (selected with RECORD_SELECT). */
export function rowToRecord(row: Row): ConvRecord {
  const type = str(row.get('conv_type'), 'conv_type');
  if (!(CONV_TYPES as readonly string[]).includes(type)) throw new InternalError(`stored conversation has unknown type ${type}`);
  const rec: ConvRecord = {
    conv: { type: type as (typeof CONV_TYPES)[number], id: str(row.get('conv_id'), 'conv_id') },
    lastSeq: num(row.get('last_seq')),
    lastMsgSeq: num(row.get('last_msg_seq')),
    readSeq: num(row.get('read_seq')),
    clearedSeq: num(row.get('cleared_seq')),
    unread: num(row.get('unread')),
    mentions: num(row.get('mentions')),
    asOfSeq: num(row.get('as_of_seq')),
  };
  const title = optStr(row.get('title'));
  if (title !== undefined) {
    rec.title = title;
    rec.titleRev = optNum(row.get('title_rev')) ?? 0;
  }
  const key = str(row.get('conv_key'), 'conv_key');
  if (key !== conversationKey(rec.conv)) throw new InternalError(`conversation row ${key} holds ${conversationKey(rec.conv)}`);
  return rec;
}

export function recordParams(inbox: string, rec: ConvRecord): unknown[] {
  return [
    inbox,
    conversationKey(rec.conv),
    rec.lastSeq,
    rec.conv.type,
    rec.conv.id,
    rec.lastMsgSeq,
    rec.readSeq,
    rec.clearedSeq,
    rec.unread,
    rec.mentions,
    rec.asOfSeq,
    // Unset, not null, when absent: a null would write a tombstone with every record of a 1:1 chat.
    rec.title ?? types.unset,
    rec.title === undefined ? types.unset : (rec.titleRev ?? 0),
  ];
}

/**
 * An edit as stored in conv_edits (written by changeStatements from a checked entry). A row of
 * another shape is corruption, not input: INTERNAL, like a stored entry without its appinfo.
 */
export function parseEdit(text: string, seq: number): EditRef {
  const value: unknown = JSON.parse(text);
  if (typeof value === 'object' && value !== null && 'body' in value) {
    const { appinfo, sendTime, type, editedAt } = value as Record<string, unknown>;
    if (typeof appinfo === 'string' && typeof sendTime === 'number' && typeof type === 'string' && typeof editedAt === 'number') {
      return value as EditRef;
    }
  }
  throw new InternalError(`stored edit of seq ${seq} is malformed`);
}
