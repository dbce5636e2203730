/**
 * The v1.1 conversation ops' arguments at the edge: forged, out-of-range and malformed values
 * are refused with a typed code (BAD_REQUEST, or TOO_LARGE for an edit body over the limit)
 * before any op runs; nothing is clamped.
 */
import { describe, expect, it } from 'vitest';
import { decodeRequest, MAX_BODY_BYTES, toWireConv, toWireEntry } from '@seqline/protocol';
import type { ConversationState, Entry } from '@seqline/core';

function refusal(fields: Record<string, unknown>): { code: string; message: string } {
  const decoded = decodeRequest(JSON.stringify({ id: 1, ...fields }));
  if (decoded.ok) throw new Error(`accepted: ${JSON.stringify(decoded.request)}`);
  return { code: decoded.error.code, message: decoded.error.message };
}

const user = { type: 'user', id: 'bob' };
const send = { op: 'send', appinfo: 'a1', to: { group: 'g1' }, type: 'text', body: 1 };

describe('v1.1 arguments: every malformed one is a typed refusal', () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['conversations limit 0', { op: 'conversations', limit: 0 }, 'BAD_REQUEST', /conversations: limit/],
    ['conversations limit 501 (not clamped)', { op: 'conversations', limit: 501 }, 'BAD_REQUEST', /limit/],
    ['conversations limit fractional', { op: 'conversations', limit: 2.5 }, 'BAD_REQUEST', /limit/],
    ['conversations limit as string', { op: 'conversations', limit: '10' }, 'BAD_REQUEST', /limit/],
    ['conversations lastMessages 51', { op: 'conversations', lastMessages: 51 }, 'BAD_REQUEST', /lastMessages/],
    ['conversations lastMessages -1', { op: 'conversations', lastMessages: -1 }, 'BAD_REQUEST', /lastMessages/],
    ['conversations beforeLastSeq 0', { op: 'conversations', beforeLastSeq: 0 }, 'BAD_REQUEST', /beforeLastSeq/],
    ['read conv without upToSeq', { op: 'read', conv: user }, 'BAD_REQUEST', /upToSeq: is required with conv/],
    ['read upToSeq without conv', { op: 'read', upToSeq: 3 }, 'BAD_REQUEST', /conv: is required/],
    ['read both forms', { op: 'read', seqs: [1], conv: user, upToSeq: 1 }, 'BAD_REQUEST', /not both/],
    ['read neither form', { op: 'read' }, 'BAD_REQUEST', /seqs: is required/],
    ['read upToSeq 0', { op: 'read', conv: user, upToSeq: 0 }, 'BAD_REQUEST', /upToSeq/],
    ['read conv of a bad type', { op: 'read', conv: { type: 'room', id: 'x' }, upToSeq: 1 }, 'BAD_REQUEST', /conv.type/],
    ['read conv id with a tenant separator', { op: 'read', conv: { type: 'user', id: 't2:bob' }, upToSeq: 1 }, 'BAD_REQUEST', /conv.id/],
    ['read conv with an extra key', { op: 'read', conv: { ...user, tenant: 't2' }, upToSeq: 1 }, 'BAD_REQUEST', /conv/],
    ['clear without conv', { op: 'clear' }, 'BAD_REQUEST', /clear: conv: is required/],
    ['clear conv as a string', { op: 'clear', conv: 'user:bob' }, 'BAD_REQUEST', /conv/],
    ['clear upToSeq -1', { op: 'clear', conv: user, upToSeq: -1 }, 'BAD_REQUEST', /upToSeq/],
    ['delete no seqs', { op: 'delete', seqs: [] }, 'BAD_REQUEST', /delete: seqs/],
    ['delete seqs not integers', { op: 'delete', seqs: [1.5] }, 'BAD_REQUEST', /seqs/],
    ['delete seqs as strings', { op: 'delete', seqs: ['3'] }, 'BAD_REQUEST', /seqs/],
    ['delete seq 0', { op: 'delete', seqs: [0] }, 'BAD_REQUEST', /seqs/],
    ['delete 1001 seqs', { op: 'delete', seqs: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'BAD_REQUEST', /seqs/],
    ['edit without body', { op: 'edit', appinfo: 'a1' }, 'BAD_REQUEST', /edit: body: is required/],
    ['edit without appinfo', { op: 'edit', body: 1 }, 'BAD_REQUEST', /appinfo/],
    ['edit empty type', { op: 'edit', appinfo: 'a1', body: 1, type: '' }, 'BAD_REQUEST', /type/],
    ['edit body too large', { op: 'edit', appinfo: 'a1', body: 'x'.repeat(MAX_BODY_BYTES) }, 'TOO_LARGE', /body/],
    ['send mentions empty', { ...send, mentions: [] }, 'BAD_REQUEST', /mentions/],
    ['send mentions 101', { ...send, mentions: Array.from({ length: 101 }, (_, i) => `u${i}`) }, 'BAD_REQUEST', /mentions/],
    ['send mentions bad id', { ...send, mentions: ['t2:bob'] }, 'BAD_REQUEST', /mentions: not a user id/],
    ['send mentions not strings', { ...send, mentions: [7] }, 'BAD_REQUEST', /mentions/],
    ['send mentions @all with others', { ...send, mentions: ['@all', 'bob'] }, 'BAD_REQUEST', /must be alone/],
    ['history conv malformed', { op: 'history', conv: { type: 'user' } }, 'BAD_REQUEST', /conv.id/],
  ];
  it.each(cases)('%s', (_, fields, code, message) => {
    const r = refusal(fields);
    expect(r.code).toBe(code);
    expect(r.message).toMatch(message);
  });

  it('an edit body deeper than 64 levels is refused like a send body', () => {
    let body: unknown = 1;
    for (let i = 0; i < 70; i++) body = [body];
    expect(refusal({ op: 'edit', appinfo: 'a1', body })).toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/nests deeper/),
    });
  });
});

describe('v1.1 encoding: documented fields only', () => {
  const msg: Entry = {
    seq: 5,
    kind: 'msg',
    appinfo: 'a1',
    conv: { type: 'group', id: 'g1' },
    from: 'alice',
    sendTime: 1,
    type: 'text',
    body: { t: 'new' },
    mentions: ['bob'],
    edit: { appinfo: 'a1', sendTime: 1, type: 'text', body: { t: 'new' }, editedAt: 2 },
  };

  it('toWireEntry copies mentions, edit and upToSeq, and nothing an adapter added', () => {
    const leaky = { ...msg, tenantKey: 't:alice', edit: { ...msg.edit, internal: 1 } } as Entry;
    expect(toWireEntry(leaky)).toEqual({ ...msg });
    const clear: Entry = { seq: 9, kind: 'clear', appinfo: 'clear:x', conv: msg.conv, from: 'alice', sendTime: 3, upToSeq: 5 };
    expect(toWireEntry(clear)).toEqual(clear);
  });

  it('toWireConv leaves out the index bookkeeping and adds messages only when given', () => {
    const state = {
      conv: { type: 'group', id: 'g1' },
      lastSeq: 5,
      lastMsgSeq: 5,
      readSeq: 4,
      clearedSeq: 0,
      unread: 1,
      mentions: 1,
      asOfSeq: 6,
      last: msg,
      secret: 'x',
    } as ConversationState;
    const wire = toWireConv(state);
    expect(wire).toEqual({
      conv: state.conv,
      lastSeq: 5,
      last: toWireEntry(msg),
      readSeq: 4,
      unread: 1,
      mentions: 1,
      clearedSeq: 0,
      asOfSeq: 6,
    });
    expect(toWireConv({ ...state, last: null }, [msg]).messages).toEqual([toWireEntry(msg)]);
  });
});
