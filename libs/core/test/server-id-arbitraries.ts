/**
 * The generators and the id makers of server-ids.test.ts: operations of every job and
 * server-entry kind, drawn so that near-collisions are common, and the id or appinfo each makes.
 */
import fc from 'fast-check';
import {
  afterSendJobId,
  clearAppinfo,
  deleteAppinfo,
  editAppinfo,
  editCopiesJobId,
  editJobId,
  fanoutJobId,
  groupCreateAppinfo,
  groupEventAppinfo,
  groupEventJobId,
  groupRenameAppinfo,
  groupNotifyJobId,
  isClientAppinfo,
  MAX_CLIENT_APPINFO_LENGTH,
  mentionJobId,
  offlineNotifyJobId,
  readAppinfo,
  recallAppinfo,
  recallCopiesJobId,
  recallJobId,
  receiptAppinfo,
  receiptJobId,
  streamMarkerAppinfo,
} from '../src/index.ts';

// Small pools make near-collisions (same tenant, an id equal to a kind word or to an appinfo,
// ':' inside a free part) common; the random arms cover the rest of each domain.
const pool = <T>(values: T[], rest: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: rest });
export const anId = pool(['a', 'b', '1', 'group', 'create'], fc.stringMatching(/^[A-Za-z0-9_.@-]{1,64}$/));
export const clientAppinfo = pool(
  ['a', 'b', '1', 'local-1'],
  fc.string({ unit: 'binary', minLength: 1, maxLength: MAX_CLIENT_APPINFO_LENGTH }).filter(isClientAppinfo),
);
/** A free part in general: any string, ':' included. */
export const free = pool(['', ':', 'a:b', 'b:', ':a', 'a:1', 'edit:a:b', 'group:a:create'], fc.oneof(clientAppinfo, fc.string()));
export const made = pool(['m1', 'a'], fc.uuid());
export const seq = pool([0, 1, 11], fc.nat());

type Fields = Record<string, fc.Arbitrary<unknown>>;
export type Op = { k: string } & Record<string, unknown>;

/** An operation of one of `table`'s kinds, its fields drawn from the kind's arbitraries. */
export function opOf(table: Record<string, Fields>): fc.Arbitrary<Op> {
  return fc.constantFrom(...Object.keys(table)).chain((k) => fc.record(table[k]!).map((f) => ({ k, ...f })));
}

/** Two operations: independent, or the second of the same kind sharing any of the first's fields. */
export function pairOf(table: Record<string, Fields>): fc.Arbitrary<[Op, Op]> {
  return opOf(table).chain((a) => {
    const near = Object.fromEntries(Object.entries(table[a.k]!).map(([f, arb]) => [f, fc.oneof(fc.constant(a[f]), arb)]));
    return fc
      .oneof(
        opOf(table),
        fc.record(near).map((f) => ({ k: a.k, ...f })),
      )
      .map((b): [Op, Op] => [a, b]);
  });
}

export const messageKinds = ['fanout', 'mention', 'after-send', 'recall', 'recall-copies'] as const;

/**
 * The durable jobs, as the operations they stand for. A message is named by its sender's inbox
 * and appinfo: a sender cannot reuse an appinfo for another destination (checkResend).
 */
export function jobKinds(appinfo: fc.Arbitrary<string>, serverAppinfo: fc.Arbitrary<string>): Record<string, Fields> {
  const message = { tenant: anId, sender: anId, appinfo };
  return {
    ...Object.fromEntries(messageKinds.map((k) => [k, message])),
    edit: { tenant: anId, author: anId, appinfo: serverAppinfo },
    'edit-copies': { tenant: anId, author: anId, appinfo: serverAppinfo },
    group: { tenant: anId, group: anId, appinfo: serverAppinfo },
    receipt: { tenant: anId, sender: anId, appinfo, reader: anId },
    'group-notify': { tenant: anId, group: anId, gseq: seq },
    'offline-notify': { tenant: anId, user: anId, firstSeq: seq, lastSeq: seq },
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- a generated op has its kind's fields (jobKinds, entryKinds) */
export function jobId(op: Op): string {
  const o = op as any;
  switch (op.k) {
    case 'fanout':
      return fanoutJobId(o);
    case 'mention':
      return mentionJobId(o);
    case 'after-send':
      return afterSendJobId(o);
    case 'recall':
      return recallJobId(o);
    case 'recall-copies':
      return recallCopiesJobId(o);
    case 'edit':
      return editJobId(o);
    case 'edit-copies':
      return editCopiesJobId(o);
    case 'group':
      return groupEventJobId(o);
    case 'receipt':
      return receiptJobId(o);
    case 'group-notify':
      return groupNotifyJobId(o);
    case 'offline-notify':
      return offlineNotifyJobId(o);
  }
  throw new Error(`no job kind ${op.k}`);
}

/** The server-made entries, as what they stand for within the inbox or stream that holds them. */
export function entryKinds(appinfo: fc.Arbitrary<string>, madeId: fc.Arbitrary<string>): Record<string, Fields> {
  const own = { who: anId, made: madeId };
  return {
    recall: { sender: anId, appinfo },
    tick: { appinfo },
    receipt: { referSeq: seq, readerCount: seq },
    read: own,
    clear: own,
    delete: own,
    edit: own,
    'group-create': { group: anId },
    'group-event': { group: anId, event: fc.constantFrom('add', 'remove', 'tier'), made: madeId },
    'group-rename': { group: anId, nameRev: seq },
  };
}

export function entryAppinfo(op: Op): string {
  const o = op as any;
  switch (op.k) {
    case 'recall':
      return recallAppinfo(o);
    case 'tick':
      return streamMarkerAppinfo(o.appinfo);
    case 'receipt':
      return receiptAppinfo(o.referSeq, o.readerCount);
    case 'read':
      return readAppinfo({ reader: o.who, made: o.made });
    case 'clear':
      return clearAppinfo({ owner: o.who, made: o.made });
    case 'delete':
      return deleteAppinfo({ owner: o.who, made: o.made });
    case 'edit':
      return editAppinfo({ editor: o.who, made: o.made });
    case 'group-create':
      return groupCreateAppinfo(o.group);
    case 'group-event':
      return groupEventAppinfo(o);
    case 'group-rename':
      return groupRenameAppinfo(o);
  }
  throw new Error(`no entry kind ${op.k}`);
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
export const RUNS = { numRuns: 3_000 };
