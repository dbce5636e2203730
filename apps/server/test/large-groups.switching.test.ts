/**
 * Issue 4, "what must be true" #4: a group grows 50 → 150 → 2 500 → 9 000 (→ 12 000 once the
 * maximum is raised live) and shrinks back to 50, crossing small → large → huge and back, with
 * messages sent at every stage and resends across the switches. Afterwards every user who was
 * ever a member sees, in its inbox plus the group stream within its windows, exactly the
 * messages sent while it was a member: none lost, none twice, none from outside its windows.
 * Setup and reads call the messaging service in-process (12 000 sockets are not the point).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, Tier } from '@seqline/core';
import { appinfo, startTestServer, type TestServer } from './harness.ts';
import { retryOverloaded, workersIdle as idle } from './large-groups.support.ts';

const GROUP = 'grow';
const user = (i: number) => `g${String(i).padStart(5, '0')}`;
const caller = (u: string) => ({ tenant: 'default', user: u });
const ADMIN = user(0);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

const workersIdle = () => idle(s);

/** Every entry of a user's inbox (sync paging by max seq, as a client does). */
async function inboxOf(u: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let maxSeq = 0; ;) {
    const page = await s.messaging.sync(caller(u), maxSeq, 1000);
    out.push(...page.entries);
    maxSeq = page.entries.at(-1)?.seq ?? maxSeq;
    if (!page.hasMore) return out;
  }
}

/** Every group-stream entry the user may read (group.history paging from 0). */
async function streamOf(u: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let after = 0; ;) {
    const page = await s.messaging.groupHistory(caller(u), { id: GROUP, afterGseq: after, limit: 1000 });
    out.push(...page.messages);
    after = page.messages.at(-1)?.gseq ?? after;
    if (!page.hasMore) return out;
  }
}

describe('tier switching: small → large → huge → back', () => {
  it('loses and duplicates nothing for any member, and keeps the windows of joiners and removed members', async () => {
    const members = new Set<string>();
    /** appinfo → who was a member when it was sent, and who sent it. */
    const audience = new Map<string, Set<string>>();
    const senders = new Map<string, string>();
    const readFanout = new Set<string>();
    const tiers: Tier[] = [];
    const sendFrom = async (from: string, a = appinfo()) => {
      const r = await retryOverloaded(() =>
        s.messaging.send(caller(from), { appinfo: a, to: { group: GROUP }, type: 'text', body: { size: members.size } }),
      );
      if (!r.duplicate) {
        audience.set(a, new Set(members));
        senders.set(a, from);
        if ((await s.messaging.groupInfo(caller(ADMIN), GROUP)).fanout === 'read') readFanout.add(a);
      }
      return { ...r, appinfo: a };
    };
    const stage = async (size: number, expected: Tier) => {
      const current = [...members].sort();
      if (size > members.size) {
        const add: string[] = [];
        for (let i = 0; add.length < size - members.size; i++) if (!members.has(user(i))) add.push(user(i));
        for (let i = 0; i < add.length; i += 5000) {
          const r = await s.messaging.addMembers(caller(ADMIN), GROUP, add.slice(i, i + 5000));
          for (const u of add.slice(i, i + 5000)) members.add(u);
          expect(r.memberCount).toBe(members.size);
        }
      } else {
        const remove = current.filter((u) => u !== ADMIN).slice(size - members.size);
        const r = await s.messaging.removeMembers(caller(ADMIN), GROUP, remove);
        for (const u of remove) members.delete(u);
        expect(r.memberCount).toBe(size);
      }
      const info = await s.messaging.groupInfo(caller(ADMIN), GROUP);
      expect({ size: info.memberCount, tier: info.tier }).toEqual({ size, tier: expected });
      tiers.push(info.tier);
      const list = [...members];
      for (let k = 0; k < 3; k++) await sendFrom(list[(k * 7919) % list.length]!);
    };

    // 50, small.
    for (let i = 0; i < 50; i++) members.add(user(i));
    await s.messaging.createGroup(caller(ADMIN), { name: 'growing', id: GROUP, members: [...members].filter((u) => u !== ADMIN) });
    for (let k = 0; k < 3; k++) await sendFrom(user(k * 13));
    await stage(150, 'large');
    const writeMsg = await sendFrom(user(20));
    await stage(2500, 'huge');
    // A resend after the switch goes the way the original went (write), not into the stream.
    expect(await sendFrom(user(20), writeMsg.appinfo)).toMatchObject({ duplicate: true, seq: writeMsg.seq });
    const readMsg = await sendFrom(user(10));
    await stage(9000, 'huge');
    await expect(
      s.messaging.addMembers(
        caller(ADMIN),
        GROUP,
        Array.from({ length: 3000 }, (_, i) => user(9000 + i)),
      ),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await s.settings.update({ tiers: { maxMembers: 12_000 } });
    await stage(12_000, 'huge');
    await stage(9000, 'huge');
    await stage(2500, 'huge'); // hysteresis: still huge above 1 800
    await stage(1500, 'large');
    // A resend of a read-fanout message after the switch back stays in the stream, once.
    expect(await sendFrom(user(10), readMsg.appinfo)).toMatchObject({ duplicate: true, seq: readMsg.seq });
    await stage(150, 'large'); // hysteresis: still large above 90
    await stage(50, 'small');
    // Removed in the huge phase, back now: a second window.
    const back = Array.from({ length: 10 }, (_, i) => user(5000 + i));
    await s.messaging.addMembers(caller(ADMIN), GROUP, back);
    for (const u of back) members.add(u);
    await sendFrom(back[0]!);
    expect(tiers).toEqual(['large', 'huge', 'huge', 'huge', 'huge', 'huge', 'large', 'large', 'small']);
    await workersIdle();

    // The stream holds exactly the messages sent while the group was huge; the admin (a member
    // throughout) has every other one in its inbox.
    expect(readFanout.size).toBe(16);
    const adminStream = (await streamOf(ADMIN)).filter((e) => e.kind === 'msg').map((e) => e.appinfo);
    expect(new Set(adminStream)).toEqual(readFanout);
    const adminInbox = await inboxOf(ADMIN);
    const adminMsgs = adminInbox.filter((e) => e.kind === 'msg').map((e) => e.appinfo);
    expect(new Set(adminMsgs.filter((a) => !readFanout.has(a)))).toEqual(new Set([...audience.keys()].filter((a) => !readFanout.has(a))));
    // Switch points: one into read-fanout (from the stream head then), one back (up to the head then).
    const switches = adminInbox.filter((e) => e.type === 'group.tier').map((e) => e.body as Record<string, unknown>);
    expect(switches).toEqual([
      expect.objectContaining({ event: 'tier', tier: 'huge', fanout: 'read', fromGseq: 0 }),
      expect.objectContaining({ event: 'tier', tier: 'large', fanout: 'write', upToGseq: expect.any(Number) }),
    ]);
    // Degradation: membership changes of the huge phase reached only the members concerned.
    expect(adminInbox.filter((e) => e.type === 'group.add')).toHaveLength(2); // 150 (large) and the re-join (small)
    expect(adminInbox.filter((e) => e.type === 'group.remove')).toHaveLength(3); // 1500→ is large again, 150, 50
    const joinerAt9000 = await inboxOf(user(8000));
    expect(joinerAt9000.filter((e) => e.type === 'group.add').map((e) => (e.body as Record<string, unknown>).count)).toEqual([1500]); // its add frame (the second of 5 000 + 1 500)

    const everyone = Array.from({ length: 12_000 }, (_, i) => user(i));
    let checked = 0;
    for (let i = 0; i < everyone.length; i += 500) {
      await Promise.all(
        everyone.slice(i, i + 500).map(async (u) => {
          const inbox = (await inboxOf(u)).filter((e) => e.kind === 'msg' && e.conv.id === GROUP).map((e) => e.appinfo);
          const fromStream = (await streamOf(u)).filter((e) => e.kind === 'msg').map((e) => e.appinfo);
          expect(new Set(inbox).size, `${u}: inbox duplicates`).toBe(inbox.length);
          expect(new Set(fromStream).size, `${u}: stream duplicates`).toBe(fromStream.length);
          const inBoth = inbox.filter((a) => fromStream.includes(a));
          // Only a sender's own message may be in both (its own copy + the stream's one copy).
          for (const a of inBoth) expect(senders.get(a), `${u}: ${a} in inbox and stream`).toBe(u);
          const seen = new Set([...inbox, ...fromStream]);
          const expected = new Set([...audience].filter(([, who]) => who.has(u)).map(([a]) => a));
          expect(seen, `${u}: view`).toEqual(expected);
          checked++;
        }),
      );
    }
    expect(checked).toBe(12_000);
  }, 180_000);
});
