/**
 * The embedded server with its memory bounds (SEQLINE_MAX_SEQ_KEYS, SEQLINE_MAX_CACHED_INBOXES)
 * far below its users: it forgets inboxes' seqs and heads all the time, and clients must not
 * notice beyond seqs that jump forward — no step back, no skip, one copy of each message,
 * resends still deduped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, waitFor, type TestServer, type WireEntry } from './harness.ts';

const USERS = 6;
let s: TestServer;
let clients: TestClient[] = [];

beforeAll(async () => {
  s = await startTestServer({ SEQLINE_MAX_SEQ_KEYS: '2', SEQLINE_MAX_CACHED_INBOXES: '2' });
  clients = await Promise.all(Array.from({ length: USERS }, (_, i) => TestClient.connect(s.url, `mem${i}`)));
});
afterAll(async () => {
  for (const c of clients) c.close();
  await s.stop();
});

const msgs = (entries: WireEntry[]) => entries.filter((e) => e.kind === 'msg');

describe('embedded server with SEQLINE_MAX_SEQ_KEYS=2, SEQLINE_MAX_CACHED_INBOXES=2 and 6 users', () => {
  it('every inbox keeps strictly increasing seqs and exactly the messages sent to and from it', async () => {
    const expected = new Map<string, Set<string>>(clients.map((c) => [c.user, new Set()]));
    const firstSends: { from: TestClient; args: Record<string, unknown>; seq: number }[] = [];
    for (let round = 0; round < 4; round++) {
      // Everyone sends to everyone else at once: the bound of 2 keys is passed on every round.
      await Promise.all(
        clients.flatMap((from, i) =>
          clients
            .filter((_, j) => j !== i)
            .map(async (to) => {
              const args = { appinfo: appinfo(), to: { user: to.user }, type: 'text', body: { round } };
              const sent = await from.ok<{ seq: number }>('send', args);
              expected.get(from.user)!.add(args.appinfo);
              expected.get(to.user)!.add(args.appinfo);
              if (round === 0) firstSends.push({ from, args, seq: sent.seq });
            }),
        ),
      );
    }
    for (const c of clients) {
      const want = expected.get(c.user)!;
      const inbox = await waitFor(async () => {
        const all = await c.syncAll();
        return msgs(all).length >= want.size ? all : undefined;
      });
      const seqs = inbox.map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      expect(new Set(msgs(inbox).map((e) => e.appinfo))).toEqual(want);
      expect(msgs(inbox)).toHaveLength(want.size);
    }
    // A resend of a round-0 message, long forgotten by the allocator's memory, is still a duplicate.
    for (const { from, args, seq } of firstSends.slice(0, 5)) {
      expect(await from.ok('send', args)).toMatchObject({ seq, duplicate: true });
    }
  });

  it('a client tailing by pushes sees each push name the seq before it in its inbox', async () => {
    const [alice, bob] = clients;
    const before = bob!.pushes.length;
    for (let i = 0; i < 10; i++) {
      // Other users' sends between alice's keep bob's section forgetting.
      await Promise.all([
        alice!.ok('send', { appinfo: appinfo(), to: { user: bob!.user }, type: 'text', body: { i } }),
        clients[2]!.ok('send', { appinfo: appinfo(), to: { user: clients[3]!.user }, type: 'text', body: { i } }),
        clients[4]!.ok('send', { appinfo: appinfo(), to: { user: clients[5]!.user }, type: 'text', body: { i } }),
      ]);
    }
    await waitFor(() => bob!.pushes.length - before >= 10);
    const inbox = await bob!.syncAll();
    const seqs = inbox.map((e) => e.seq);
    for (const push of bob!.pushes.slice(before)) {
      for (const entry of push.entries) {
        const idx = seqs.indexOf(entry.seq);
        expect(idx).toBeGreaterThanOrEqual(0);
        if (entry === push.entries[0]) expect(push.prevSeq).toBe(idx === 0 ? 0 : seqs[idx - 1]);
      }
    }
  });
});
