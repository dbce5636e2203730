import { describe, expect, it } from 'vitest';
import type { Entry } from '@seqline/core';
import {
  BadRequestError,
  encodeError,
  encodeGroupPush,
  encodePush,
  encodeReply,
  RecallExpiredError,
  toWireEntry,
  toWireGroupMessage,
} from '@seqline/protocol';

const msg: Entry = {
  seq: 42,
  kind: 'msg',
  appinfo: '0192',
  conv: { type: 'user', id: 'bob' },
  from: 'alice',
  sendTime: 1_763_700_000_000,
  type: 'text',
  body: { text: 'hi' },
};

describe('toWireEntry', () => {
  it('keeps the documented fields of a message', () => {
    expect(toWireEntry(msg)).toEqual(msg);
  });

  it('drops undefined fields so they do not appear as keys', () => {
    const read: Entry = { ...msg, kind: 'read', type: undefined, body: undefined, referSeq: 17, seqs: [12, 17] };
    const wire = toWireEntry(read);
    expect(Object.keys(wire)).toEqual(['seq', 'kind', 'appinfo', 'conv', 'from', 'sendTime', 'referSeq', 'seqs']);
  });

  it('never forwards fields it does not know (internal keys stay inside)', () => {
    const leaky = { ...msg, conv: { type: 'user', id: 'bob', inbox: 't1:bob' }, recalled: true, tenant: 't1' } as unknown as Entry;
    const json = JSON.stringify(toWireEntry(leaky));
    expect(json).not.toContain('t1');
    expect(json).not.toContain('recalled');
  });

  it('carries receipt and recall details', () => {
    const receipt: Entry = { ...msg, kind: 'receipt', type: undefined, body: undefined, referSeq: 42, readBy: ['bob', 'carol'] };
    expect(toWireEntry(receipt)).toMatchObject({ referSeq: 42, readBy: ['bob', 'carol'] });
    const recall: Entry = { ...msg, kind: 'recall', type: undefined, body: undefined, recall: { appinfo: 'z', sendTime: 5 } };
    expect(toWireEntry(recall).recall).toEqual({ appinfo: 'z', sendTime: 5 });
  });

  it('group messages keep their gseq', () => {
    expect(toWireGroupMessage({ ...msg, gseq: 42 })).toMatchObject({ seq: 42, gseq: 42 });
  });
});

describe('frame encoders', () => {
  it('encodeReply puts id and ok first and a result cannot override them', () => {
    const text = encodeReply(7, { seq: 3, id: 'g1', ok: false });
    expect(text).toBe('{"id":7,"ok":true,"seq":3}');
  });

  it('encodeError carries code and message, id may be null', () => {
    expect(JSON.parse(encodeError(null, new BadRequestError('frame is not valid JSON')))).toEqual({
      id: null,
      ok: false,
      error: { code: 'BAD_REQUEST', message: 'frame is not valid JSON' },
    });
    expect(JSON.parse(encodeError(3, new RecallExpiredError())).error.code).toBe('RECALL_EXPIRED');
  });

  it('encodePush converts entries to wire entries', () => {
    const leaky = { ...msg, internal: 1 } as unknown as Entry;
    expect(JSON.parse(encodePush(41, [leaky]))).toEqual({ op: 'push', prevSeq: 41, entries: [msg] });
  });

  it('encodeGroupPush: the extension frame names the group and prevGseq; messages carry gseq', () => {
    const leaky = { ...msg, conv: { type: 'group', id: 'town' }, internal: 1 } as unknown as Entry;
    expect(JSON.parse(encodeGroupPush('town', 41, [leaky]))).toEqual({
      op: 'group.push',
      group: 'town',
      prevGseq: 41,
      messages: [{ ...msg, conv: { type: 'group', id: 'town' }, gseq: 42 }],
    });
  });
});
