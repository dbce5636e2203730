/**
 * Shape checks for op results. Minimal on purpose: each checks the fields the SDK or a typical
 * app relies on, so a server bug surfaces as a PROTOCOL error instead of a crash later on.
 */
import { isConversationList, isEntryList, isObj, isSeq, type Obj, type OpName, type OpResult } from './wire.ts';

type Check = (r: Obj) => boolean;

const num = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const str = (v: unknown): boolean => typeof v === 'string';
const bool = (v: unknown): boolean => typeof v === 'boolean';
const tier = (v: unknown): boolean => v === 'small' || v === 'large' || v === 'huge';

function isGroupNewsList(v: unknown): boolean {
  return Array.isArray(v) && v.every((g) => isObj(g) && str(g['id']) && isSeq(g['headGseq']) && isSeq(g['cursor']));
}

function isGroupMessageList(v: unknown): boolean {
  return isEntryList(v) && v.every((m) => isSeq((m as unknown as Obj)['gseq']));
}

const membership: Check = (r) => tier(r['tier']) && num(r['memberCount']);

const CHECKS: { [O in OpName]: Check } = {
  send: (r) => isSeq(r['seq']) && num(r['sendTime']) && bool(r['duplicate']),
  // `groups` may be omitted (no read-fanout groups; normalised to [] below), `convs` by a server that predates them.
  sync: (r) =>
    isEntryList(r['entries']) &&
    isSeq(r['headSeq']) &&
    bool(r['hasMore']) &&
    (r['groups'] === undefined || isGroupNewsList(r['groups'])) &&
    (r['convs'] === undefined || isConversationList(r['convs'])),
  history: (r) => isEntryList(r['entries']) && bool(r['hasMore']),
  read: (r) => isSeq(r['seq']),
  recall: (r) => isSeq(r['seq']),
  conversations: (r) => isConversationList(r['convs']) && isSeq(r['headSeq']) && bool(r['hasMore']),
  delete: (r) => isSeq(r['seq']),
  clear: (r) => isSeq(r['seq']),
  edit: (r) => isSeq(r['seq']),
  'group.create': (r) => str(r['group']) && tier(r['tier']),
  'group.add': membership,
  'group.remove': membership,
  'group.rename': (r) => str(r['group']) && str(r['name']),
  'group.info': (r) =>
    (r['group'] === undefined || str(r['group'])) &&
    str(r['name']) &&
    tier(r['tier']) &&
    num(r['memberCount']) &&
    (r['fanout'] === 'write' || r['fanout'] === 'read') &&
    isSeq(r['headGseq']),
  'group.history': (r) => isGroupMessageList(r['messages']) && bool(r['hasMore']),
  'group.ack': (r) => isSeq(r['cursor']),
  'group.readers': (r) =>
    isSeq(r['gseq']) &&
    num(r['readCount']) &&
    num(r['unreadCount']) &&
    Array.isArray(r['readers']) &&
    r['readers'].every(str) &&
    bool(r['hasMore']),
  auth: (r) => r['exp'] === null || num(r['exp']),
};

/** Returns the typed result, or null when the server's answer does not have the op's shape. */
export function checkResult<O extends OpName>(op: O, result: Obj): OpResult<O> | null {
  const check = CHECKS[op];
  if (!check(result)) return null;
  if (op === 'sync' && result['groups'] === undefined) return { ...result, groups: [] } as unknown as OpResult<O>;
  return result as unknown as OpResult<O>;
}

export function isKnownOp(op: string): op is OpName {
  return Object.prototype.hasOwnProperty.call(CHECKS, op);
}
