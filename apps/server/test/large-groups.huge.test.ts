/**
 * Issue 4, "what must be true" #1: a 10 000-member huge group. One message is one copy in the
 * group stream: readable by every member at once (sync lists the group, group.history returns
 * it) and pushed to every connected member — all 10 000, each on its own socket, held by a
 * child process (file-descriptor limits are per process). The group is set up in-process
 * (sockets are not the point there); the send, the pushes and the reads go over sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, waitFor, type TestServer } from './harness.ts';
import { retryOverloaded } from './large-groups.support.ts';
import { SocketSwarm } from './swarm.ts';

const MEMBERS = 10_000;

let s: TestServer;
let swarm: SocketSwarm | undefined;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await swarm?.close();
  await s.stop();
});

describe('a 10 000-member huge group (read-fanout)', () => {
  it('one message is readable by every member at once and pushed to every connected member', async () => {
    const users = Array.from({ length: MEMBERS }, (_, i) => `m${String(i).padStart(5, '0')}`);
    const group = 'huge1';
    const admin = { tenant: 'default', user: users[0]! };
    expect(await s.messaging.createGroup(admin, { name: 'all hands', id: group, members: users.slice(1, 5000) })).toMatchObject({
      tier: 'huge',
    });
    expect(await s.messaging.addMembers(admin, group, users.slice(5000))).toEqual({ tier: 'huge', memberCount: MEMBERS });

    swarm = await SocketSwarm.start();
    const connected = await swarm.connect(s.url, users);
    expect(connected).toMatchObject({ count: MEMBERS, failed: 0 });

    const a = appinfo();
    const sent = await retryOverloaded(async () => {
      const r = await swarm!.call(0, 'send', { appinfo: a, to: { group }, type: 'text', body: { text: 'to everyone' } });
      const error = r.result.error as { code?: string } | undefined;
      if (error) throw Object.assign(new Error(`send: ${JSON.stringify(error)}`), { code: error.code });
      return r;
    });
    expect(sent.result).toMatchObject({ ok: true, duplicate: false });
    // Readable at once: the stream append happened before the answer.
    const info = await swarm.call(0, 'group.info', { group });
    expect(info.result).toMatchObject({ tier: 'huge', memberCount: MEMBERS, fanout: 'read' });
    const headGseq = info.result.headGseq as number;
    const page = await swarm.call(MEMBERS - 1, 'group.history', { group, afterGseq: 0 });
    expect(page.result.messages).toEqual([expect.objectContaining({ appinfo: a, gseq: headGseq, from: users[0] })]);

    const pushes = await waitFor(
      async () => {
        const p = await swarm!.pushes(a);
        return p.count >= MEMBERS ? p : undefined;
      },
      30_000,
      'a group push on every socket',
    );
    expect(pushes).toMatchObject({ count: MEMBERS, bad: 0, closed: [] });

    const read = await swarm.readAll(group, a);
    expect(read.errors).toEqual([]);
    expect(read).toMatchObject({ listed: MEMBERS, found: MEMBERS });
    // One stored copy, whatever the member count.
    expect((await s.messaging.groupHistory(admin, { id: group, afterGseq: 0, limit: 10 })).messages).toHaveLength(1);
    // Read counts on request: nobody acked yet, then one member did.
    await s.messaging.groupAck({ tenant: 'default', user: users[42]! }, group, headGseq);
    const r0 = Date.now();
    const readers = await s.messaging.groupReaders(admin, { id: group, gseq: headGseq });
    const readersMs = Date.now() - r0;
    expect(readers).toMatchObject({ readCount: 1, unreadCount: MEMBERS - 2, readers: [users[42]] });
    console.log(
      `huge group: ${MEMBERS} members; send answered in ${sent.ms} ms; all ${MEMBERS} sockets had the push ` +
        `${pushes.last - sent.at} ms after the send; every member synced + paged it in ${read.ms} ms (connect: ${connected.ms} ms); ` +
        `group.readers over ${MEMBERS} members in ${readersMs} ms`,
    );
  }, 120_000);
});
