/**
 * Attacks on read-fanout group conversations (issue #26 item 3), embedded: forged mentions
 * (outsiders, a member who left), a replayed mention send, malformed mentions and an ack of
 * someone else's group — each a typed error or a no-op, nothing stored twice, no count moved.
 */
import { describe, expect, it } from 'vitest';
import { groupConv, listedGroup, say } from './group-conversation-scenarios.ts';
import { appinfo, waitFor, type TestClient } from './harness.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer({ settings: { tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } } });
let n = 0;

async function trio(): Promise<{ alice: TestClient; bob: TestClient; eve: TestClient; group: string }> {
  n++;
  const [alice, bob, eve] = await Promise.all(['ha', 'hb', 'he'].map((p) => suite.connect(`${p}${n}`)));
  const r = await alice!.ok<{ group: string; tier: string }>('group.create', { name: 'h', members: [bob!.user, `filler${n}`] });
  expect(r.tier).toBe('huge');
  await listedGroup(bob!, r.group);
  return { alice: alice!, bob: bob!, eve: eve!, group: r.group };
}

const headGseq = async (c: TestClient, group: string) => (await c.ok<{ headGseq: number }>('group.info', { group })).headGseq;

describe('read-fanout group conversations under attack (embedded)', () => {
  it('forged and malformed mentions are BAD_REQUEST with nothing stored: outsiders, @all with ids, non-ids', async () => {
    const { alice, bob, eve, group } = await trio();
    const head = await headGseq(alice, group);
    const inboxHead = (await alice.ok<{ headSeq: number }>('sync', { maxSeq: 0 })).headSeq;
    for (const mentions of [[eve.user], [bob.user, eve.user], ['@all', bob.user], ['not an id!'], [], [42]]) {
      const r = await alice.call('send', { appinfo: appinfo(), to: { group }, type: 'text', body: {}, mentions });
      expect(r, JSON.stringify(mentions)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    }
    expect(await headGseq(alice, group)).toBe(head);
    expect((await alice.ok<{ headSeq: number }>('sync', { maxSeq: 0 })).headSeq).toBe(inboxHead);
    expect(await eve.syncAll()).toEqual([]);
    expect(await groupConv(bob, group)).toMatchObject({ unread: 0, mentions: 0 });
  });

  it('a replayed mention send is a duplicate: one stream copy, one inbox copy, counted once', async () => {
    const { alice, bob, group } = await trio();
    const first = await say(alice, group, 'bob!', [bob.user]);
    await waitFor(async () => ((await groupConv(bob, group))?.mentions === 1 ? true : undefined));
    for (let i = 0; i < 3; i++) {
      const again = await alice.ok<{ seq: number; duplicate: boolean }>('send', {
        appinfo: first.appinfo,
        to: { group },
        type: 'text',
        body: { text: 'bob!' },
        mentions: [bob.user],
      });
      expect(again).toMatchObject({ seq: first.seq, duplicate: true });
    }
    await new Promise((r) => setTimeout(r, 200)); // a second copy would have been appended by now
    expect((await bob.syncAll()).filter((e) => e.appinfo === first.appinfo)).toHaveLength(1);
    const stream = await bob.ok<{ messages: Array<{ appinfo: string }> }>('group.history', { group, afterGseq: 0 });
    expect(stream.messages.filter((m) => m.appinfo === first.appinfo)).toHaveLength(1);
    expect(await groupConv(bob, group)).toMatchObject({ unread: 1, mentions: 1 });
  });

  it("acking another group's stream is FORBIDDEN and reads nothing; an ack past the head is clamped", async () => {
    const { alice, bob, eve, group } = await trio();
    await say(alice, group, 'bob?', [bob.user]);
    await waitFor(async () => ((await groupConv(bob, group))?.mentions === 1 ? true : undefined));
    expect(await eve.call('group.ack', { group, gseq: 1_000_000 })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect(await eve.syncAll()).toEqual([]);
    for (const gseq of [-1, 1.5, '7', null]) {
      expect(await bob.call('group.ack', { group, gseq })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    }
    // gseq 0 is a query: it writes nothing, the mention still counts.
    const before = (await bob.ok<{ headSeq: number }>('sync', { maxSeq: 0 })).headSeq;
    await bob.ok('group.ack', { group, gseq: 0 });
    expect((await bob.ok<{ headSeq: number }>('sync', { maxSeq: 0 })).headSeq).toBe(before);
    expect(await groupConv(bob, group)).toMatchObject({ unread: 1, mentions: 1 });
    const head = await headGseq(bob, group);
    expect(await bob.ok('group.ack', { group, gseq: 1_000_000 })).toMatchObject({ cursor: head });
    expect(await groupConv(bob, group)).toMatchObject({ readGseq: head, unread: 0, mentions: 0 });
  });

  it('an expired recall of a mention changes no count (RECALL_EXPIRED); only the sender edits it (NOT_FOUND for others)', async () => {
    const { alice, bob, group } = await trio();
    const m = await say(alice, group, 'bob, later', [bob.user]);
    await waitFor(async () => ((await groupConv(bob, group))?.mentions === 1 ? true : undefined));
    // An edit names the caller's own message (an appinfo is unique per sender): alice's is not found.
    expect(await bob.call('edit', { appinfo: m.appinfo, body: { text: 'forged' } })).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND' },
    });
    suite.server.clock.offset += 25 * 3_600_000;
    try {
      expect(await alice.call('recall', { appinfo: m.appinfo })).toMatchObject({ ok: false, error: { code: 'RECALL_EXPIRED' } });
    } finally {
      suite.server.clock.offset -= 25 * 3_600_000;
    }
    const conv = await groupConv(bob, group);
    expect(conv).toMatchObject({ unread: 1, mentions: 1 });
    expect(conv!.last).toMatchObject({ appinfo: m.appinfo, body: { text: 'bob, later' } });
  });
});
