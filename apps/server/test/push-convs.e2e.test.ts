/**
 * Push frames carry `convs` (v1.1) on the embedded server: the state of every conversation the
 * pushed entries touch, exact at or past them, so a device keeps its list current from pushes
 * alone — the unread count after a send, the read on another device, a mention.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, waitFor, type Push, type TestServer } from './harness.ts';

interface WireConv {
  conv: { type: string; id: string };
  lastSeq: number;
  last: { seq: number; body?: unknown } | null;
  readSeq: number;
  unread: number;
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
}
type PushWithConvs = Push & { convs?: WireConv[] };

let server: TestServer;
const open: TestClient[] = [];
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const c of open) c.close();
  await server.stop();
});

let users = 0;
const user = (name: string) => `${name}${process.pid}x${++users}`;
async function connect(name: string): Promise<TestClient> {
  const c = await TestClient.connect(server.url, name);
  open.push(c);
  return c;
}

/** The push carrying the entry with this appinfo. */
function pushOf(c: TestClient, app: string): Promise<PushWithConvs> {
  return waitFor<PushWithConvs>(() => c.pushes.find((p) => p.entries.some((e) => e.appinfo === app)), 10_000, `push of ${app}`);
}

const convOf = (p: PushWithConvs, id: string) => p.convs?.find((c) => c.conv.id === id);

describe('push frames carry conversation states', () => {
  it('a send: the recipient push has the sender conversation with unread 1, then 2; the sender own copy reads it', async () => {
    const [alice, bob] = [user('alice'), user('bob')];
    const a = await connect(alice);
    const b = await connect(bob);
    const first = appinfo();
    await a.ok('send', { appinfo: first, to: { user: bob }, type: 'text', body: { text: 'one' } });
    const p1 = await pushOf(b, first);
    const e1 = p1.entries.find((e) => e.appinfo === first)!;
    expect(convOf(p1, alice)).toMatchObject({ conv: { type: 'user', id: alice }, lastSeq: e1.seq, unread: 1, mentions: 0, readSeq: 0 });
    expect(convOf(p1, alice)!.asOfSeq).toBeGreaterThanOrEqual(e1.seq);
    expect(convOf(p1, alice)!.last).toMatchObject({ seq: e1.seq, body: { text: 'one' } });

    const second = appinfo();
    await a.ok('send', { appinfo: second, to: { user: bob }, type: 'text', body: { text: 'two' } });
    const p2 = await pushOf(b, second);
    expect(convOf(p2, alice)).toMatchObject({ unread: 2, last: { body: { text: 'two' } } });

    // Alice's own copy: sending reads the conversation up to it, so nothing is unread for her.
    const mine = await pushOf(a, second);
    const own = mine.entries.find((e) => e.appinfo === second)!;
    expect(convOf(mine, bob)).toMatchObject({ unread: 0, readSeq: own.seq, lastSeq: own.seq });
    // The states are exactly what `conversations` answers.
    const listed = await b.ok<{ convs: WireConv[] }>('conversations', {});
    expect(listed.convs.find((c) => c.conv.id === alice)).toEqual(convOf(p2, alice));
  });

  it('a read on one device reaches the other device as unread 0 in the read entry push', async () => {
    const [carol, dave] = [user('carol'), user('dave')];
    const c = await connect(carol);
    const phone = await connect(dave);
    const laptop = await connect(dave);
    const app = appinfo();
    await c.ok('send', { appinfo: app, to: { user: dave }, type: 'text', body: { text: 'ping' } });
    const p = await pushOf(laptop, app);
    expect(convOf(p, carol)?.unread).toBe(1);
    const { seq } = await phone.ok<{ seq: number }>('read', { conv: { type: 'user', id: carol }, upToSeq: convOf(p, carol)!.lastSeq });
    const readPush = await waitFor<PushWithConvs>(
      () => laptop.pushes.find((x) => x.entries.some((e) => e.seq === seq)),
      10_000,
      'the read entry push',
    );
    expect(convOf(readPush, carol)).toMatchObject({ unread: 0, readSeq: convOf(p, carol)!.lastSeq });
    expect(convOf(readPush, carol)!.asOfSeq).toBeGreaterThanOrEqual(seq);
  });

  it('a group mention counts in the mentioned member push; a receipt-only push carries no convs', async () => {
    const [erin, frank] = [user('erin'), user('frank')];
    const e = await connect(erin);
    const f = await connect(frank);
    const group = `g${users}x${process.pid}`;
    await e.ok('group.create', { group, name: 'room', members: [frank] });
    const app = appinfo();
    await e.ok('send', { appinfo: app, to: { group }, type: 'text', body: { text: 'hey @frank' }, mentions: [frank] });
    const p = await pushOf(f, app);
    expect(convOf(p, group)).toMatchObject({ conv: { type: 'group', id: group }, unread: 1, mentions: 1 });
    // A v1 read sends erin a receipt: her push of it touches no conversation, so it has no convs.
    const msgSeq = p.entries.find((x) => x.appinfo === app)!.seq;
    await f.ok('read', { seqs: [msgSeq] });
    const receipt = await waitFor<PushWithConvs>(
      () => e.pushes.find((x) => x.entries.some((en) => en.kind === 'receipt')),
      10_000,
      'the receipt push',
    );
    expect(receipt.entries.every((en) => en.kind === 'receipt')).toBe(true);
    expect(receipt.convs).toBeUndefined();
  });
});
