import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterSendJobId,
  editAppinfo,
  editCopiesJobId,
  fanoutJobId,
  groupEventAppinfo,
  groupEventJobId,
  groupRenameAppinfo,
  groupNotifyJobId,
  isClientAppinfo,
  isStorableAppinfo,
  JOB_KINDS,
  MAX_CLIENT_APPINFO_LENGTH,
  MAX_JOB_ID_BYTES,
  MAX_STORED_APPINFO_BYTES,
  mentionJobId,
  offlineNotifyJobId,
  readAppinfo,
  recallAppinfo,
  recallAppinfoLookups,
  recallCopiesJobId,
  recallJobId,
  receiptAppinfo,
  receiptJobId,
  streamMarkerAppinfo,
} from '../src/index.ts';
import {
  anId,
  clientAppinfo,
  entryAppinfo,
  entryKinds,
  free,
  jobId,
  jobKinds,
  made,
  messageKinds,
  opOf,
  pairOf,
  RUNS,
  same,
  seq,
  type Op,
} from './server-id-arbitraries.ts';

describe('server-made ids', () => {
  it('the property tests draw every job kind there is', () => {
    expect(Object.keys(jobKinds(free, free)).sort()).toEqual([...JOB_KINDS].sort());
  });

  it('distinct jobs never share an id, whatever the tenants, senders, groups, kinds and appinfos (free parts may hold ":")', () => {
    fc.assert(
      fc.property(pairOf(jobKinds(free, free)), ([a, b]) => {
        expect(jobId(a) === jobId(b)).toBe(same(a, b));
      }),
      RUNS,
    );
  });

  it('distinct server entries never share an appinfo', () => {
    fc.assert(
      fc.property(pairOf(entryKinds(free, free)), ([a, b]) => {
        expect(entryAppinfo(a) === entryAppinfo(b)).toBe(same(a, b));
      }),
      RUNS,
    );
  });

  it('no server appinfo or job id is a valid client appinfo', () => {
    fc.assert(
      fc.property(opOf(jobKinds(free, free)), opOf(entryKinds(free, free)), (job, entry) => {
        expect(isClientAppinfo(jobId(job))).toBe(false);
        expect(isClientAppinfo(entryAppinfo(entry))).toBe(false);
      }),
      RUNS,
    );
  });

  it('every id fits its store for every client appinfo the edge accepts', () => {
    const real = (appinfo: fc.Arbitrary<string>) => {
      const serverAppinfo = opOf(entryKinds(appinfo, fc.uuid())).map(entryAppinfo);
      return fc.tuple(opOf(jobKinds(appinfo, serverAppinfo)), opOf(entryKinds(appinfo, fc.uuid())));
    };
    fc.assert(
      fc.property(real(clientAppinfo), ([job, entry]) => {
        expect(Buffer.byteLength(jobId(job))).toBeLessThanOrEqual(MAX_JOB_ID_BYTES);
        expect(isStorableAppinfo(entryAppinfo(entry))).toBe(true);
      }),
      RUNS,
    );
    // The worst case: 64-character ids, 128 characters of 3 UTF-8 bytes (a client appinfo, or a
    // client editId as an edit's made id), a UUIDv7 where the server makes the id.
    const id = 'i'.repeat(64);
    const longest = '中'.repeat(MAX_CLIENT_APPINFO_LENGTH);
    const uuid = '0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d';
    expect(isClientAppinfo(longest)).toBe(true);
    const appinfos = [
      recallAppinfo({ sender: id, appinfo: longest }),
      streamMarkerAppinfo(longest),
      receiptAppinfo(Number.MAX_SAFE_INTEGER, 100_000),
      editAppinfo({ editor: id, made: longest }),
      readAppinfo({ reader: id, made: uuid }),
      groupEventAppinfo({ group: id, event: 'remove', made: uuid }),
      groupRenameAppinfo({ group: id, nameRev: Number.MAX_SAFE_INTEGER }),
    ];
    for (const a of appinfos) expect(Buffer.byteLength(a)).toBeLessThanOrEqual(MAX_STORED_APPINFO_BYTES);
    const message = { tenant: id, sender: id, appinfo: longest };
    const jobs = [
      receiptJobId({ ...message, reader: id }),
      recallCopiesJobId(message),
      afterSendJobId(message),
      editCopiesJobId({ tenant: id, author: id, appinfo: editAppinfo({ editor: id, made: longest }) }),
      groupEventJobId({ tenant: id, group: id, appinfo: groupEventAppinfo({ group: id, event: 'remove', made: uuid }) }),
    ];
    for (const j of jobs) expect(Buffer.byteLength(j)).toBeLessThanOrEqual(MAX_JOB_ID_BYTES);
    // Why the job store's bound is not the 512 bytes of other key parts: a receipt needs more.
    expect(Buffer.byteLength(jobs[0]!)).toBeGreaterThan(512);
  });

  it('never equals an id of the previous version for another operation (jobs it left pending still run)', () => {
    // The previous version's shapes, for inputs it could get: client appinfos without ':', UUIDs.
    const streamAppinfo = fc.oneof(
      clientAppinfo,
      clientAppinfo.map((a) => `recall:${a}`),
      made.map((m) => `edit:${m}`),
    );
    const groupAppinfo = fc.oneof(
      anId.map((g) => `group:${g}:create`),
      fc.tuple(anId, fc.constantFrom('add', 'remove', 'tier'), made).map(([g, op, m]) => `group:${g}:${op}:${m}`),
    );
    const message = { tenant: anId, appinfo: clientAppinfo };
    const legacy = opOf({
      ...Object.fromEntries(messageKinds.map((k) => [k, message])),
      edit: { tenant: anId, appinfo: made.map((m) => `edit:${m}`) },
      'edit-copies': { tenant: anId, appinfo: made.map((m) => `edit:${m}`) },
      group: { tenant: anId, appinfo: groupAppinfo },
      receipt: { tenant: anId, sender: anId, appinfo: clientAppinfo, reader: anId },
      'group-notify': { tenant: anId, group: anId, appinfo: streamAppinfo },
      'offline-notify': { tenant: anId, user: anId, firstSeq: seq, lastSeq: seq },
    });
    const legacyId = (o: Op): string => {
      const parts = Object.entries(o)
        .filter(([f]) => f !== 'k')
        .map(([, v]) => String(v));
      return [o.k.endsWith('notify') ? 'notify' : o.k, ...parts].join(':');
    };
    expect(legacyId({ k: 'receipt', tenant: 't', sender: 'bob', appinfo: 'x', reader: 'amy' })).toBe('receipt:t:bob:x:amy');
    expect(legacyId({ k: 'group-notify', tenant: 't', group: 'g', appinfo: 'recall:x' })).toBe('notify:t:g:recall:x');
    const serverAppinfo = opOf(entryKinds(clientAppinfo, made)).map(entryAppinfo);
    fc.assert(
      fc.property(opOf(jobKinds(clientAppinfo, serverAppinfo)), legacy, (now, old) => {
        // A receipt keeps its shape: the same receipt, and only it, has the same id in both.
        expect(jobId(now) === legacyId(old)).toBe(now.k === 'receipt' && same(now, old));
      }),
      RUNS,
    );
    expect(receiptJobId({ tenant: 't', sender: 'bob', appinfo: 'x', reader: 'amy' })).toBe('receipt:t:bob:x:amy');
  });

  it('keeps the shapes that are looked up later: tick and receipt markers; recall looks up the old one too', () => {
    expect(streamMarkerAppinfo('local-1')).toBe('tick:local-1');
    expect(receiptAppinfo(17, 2)).toBe('receipt:17:2');
    expect(recallAppinfo({ sender: 'cs1', appinfo: 'local-1' })).toBe('recall:cs1:local-1');
    expect(recallAppinfoLookups({ sender: 'cs1', appinfo: 'local-1' })).toEqual(['recall:cs1:local-1', 'recall:local-1']);
  });

  it('two honest clients with one local counter: cs1 in G1 and cs2 in G2 both send local-1', () => {
    const [cs1, cs2] = [
      { tenant: 't', sender: 'cs1', appinfo: 'local-1' },
      { tenant: 't', sender: 'cs2', appinfo: 'local-1' },
    ];
    for (const make of [fanoutJobId, mentionJobId, afterSendJobId, recallJobId, recallCopiesJobId]) expect(make(cs1)).not.toBe(make(cs2));
    expect(recallAppinfo(cs1)).not.toBe(recallAppinfo(cs2));
    // A group named like a user, a message appinfo like a seq: the two notify jobs differ.
    expect(groupNotifyJobId({ tenant: 't', group: 'x', gseq: 5 })).not.toBe(
      offlineNotifyJobId({ tenant: 't', user: 'x', firstSeq: 5, lastSeq: 5 }),
    );
  });

  it('refuses a scope part that is empty or holds ":" (a bug, never client input)', () => {
    expect(() => fanoutJobId({ tenant: 't', sender: 'a:b', appinfo: 'x' })).toThrow(/holds ':'/);
    expect(() => fanoutJobId({ tenant: '', sender: 'a', appinfo: 'x' })).toThrow(/empty/);
    expect(() => groupNotifyJobId({ tenant: 't', group: 'g', gseq: 1.5 })).toThrow(/integer/);
  });
});
