import { describe, expect, it } from 'vitest';
import { buildGroupEventEntry, buildMessageCopy, convForRecipient } from '../src/index.ts';

describe('convForRecipient', () => {
  it("1:1: the recipient's copy names the sender", () => {
    expect(convForRecipient({ type: 'user', id: 'bob' }, 'alice')).toEqual({ type: 'user', id: 'alice' });
  });

  it('group: unchanged, but not aliased', () => {
    const conv = { type: 'group' as const, id: 'g1' };
    const out = convForRecipient(conv, 'alice');
    expect(out).toEqual(conv);
    expect(out).not.toBe(conv);
  });
});

describe('buildMessageCopy', () => {
  it('builds a msg entry, identical apart from conv between sender and recipient', () => {
    const base = { appinfo: 'a1', from: 'alice', sendTime: 42, type: 'text', body: { text: 'hi' } };
    const senderCopy = buildMessageCopy({ ...base, conv: { type: 'user', id: 'bob' } });
    const recipientCopy = buildMessageCopy({ ...base, conv: convForRecipient({ type: 'user', id: 'bob' }, 'alice') });
    expect(senderCopy).toEqual({
      kind: 'msg',
      appinfo: 'a1',
      conv: { type: 'user', id: 'bob' },
      from: 'alice',
      sendTime: 42,
      type: 'text',
      body: { text: 'hi' },
    });
    expect({ ...recipientCopy, conv: null }).toEqual({ ...senderCopy, conv: null });
    expect(recipientCopy.conv).toEqual({ type: 'user', id: 'alice' });
  });

  it('keeps a null body (valid JSON) and carries no stray keys', () => {
    const e = buildMessageCopy({ appinfo: 'a', from: 'x', sendTime: 1, type: 't', body: null, conv: { type: 'group', id: 'g' } });
    expect(e.body).toBeNull();
    expect(Object.keys(e).sort()).toEqual(['appinfo', 'body', 'conv', 'from', 'kind', 'sendTime', 'type']);
  });
});

describe('buildGroupEventEntry', () => {
  it('create: type group.create with members and name', () => {
    const members = ['bob', 'carol'];
    const e = buildGroupEventEntry({ group: 'g1', actor: 'alice', event: 'create', members, name: 'Team', time: 7, appinfo: 'ev1' });
    expect(e).toEqual({
      kind: 'group',
      appinfo: 'ev1',
      conv: { type: 'group', id: 'g1' },
      from: 'alice',
      sendTime: 7,
      type: 'group.create',
      body: { event: 'create', group: 'g1', actor: 'alice', members: ['bob', 'carol'], name: 'Team' },
    });
    members.push('mallory');
    expect((e.body as { members: string[] }).members).toEqual(['bob', 'carol']);
  });

  it('tier: carries the new tier; absent details are left out, not undefined', () => {
    const e = buildGroupEventEntry({ group: 'g1', actor: 'system', event: 'tier', tier: 'huge', time: 1, appinfo: 'ev2' });
    expect(e.type).toBe('group.tier');
    expect(e.body).toEqual({ event: 'tier', group: 'g1', actor: 'system', tier: 'huge' });
    expect(Object.keys(e.body as object)).not.toContain('members');
    expect(JSON.parse(JSON.stringify(e))).toEqual(e);
  });

  it.each(['add', 'remove'] as const)('%s', (event) => {
    const e = buildGroupEventEntry({ group: 'g', actor: 'a', event, members: ['x'], time: 1, appinfo: 'e' });
    expect(e.type).toBe(`group.${event}`);
    expect(e.body).toMatchObject({ event, members: ['x'] });
  });
});
