/**
 * "What is stored is what was sent" (docs/security.md, class 5), as one scenario set run
 * against the embedded server and the distributed stack: every body the protocol accepts comes
 * back from the live push, `sync` (WebSocket and HTTP), `history`, `group.push` and
 * `group.history` as the same JSON text, byte for byte; a frame holding an unpaired surrogate
 * anywhere is refused with BAD_REQUEST up front and stores nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issueToken, MAX_BODY_DEPTH } from '@seqline/protocol';
import { appinfo, SECRET, waitFor, type TestClient, type WireEntry } from '../harness.ts';
import { hostileBody, hostileType, loneSurrogate, nested, withLoneSurrogate, type JsonValue } from './hostile-json.ts';

export interface RoundTripStack {
  connect(user: string): Promise<TestClient>;
  /** `http://host:port` of the same entry point. */
  httpUrl: string;
  tenant: string;
  user(prefix: string): string;
  /** Offline members that make a group of three online users read-fanout (huge). */
  hugeFiller: string[];
  numRuns: number;
}

type Delivered = WireEntry & { gseq?: number };
type Target = 'user' | 'write-group' | 'read-group';

/** Pushes (inbox and group) by appinfo, with waiters: no polling between runs. */
class PushWatch {
  private readonly seen = new Map<string, Delivered>();
  private readonly waiting = new Map<string, (entry: Delivered) => void>();
  constructor(client: TestClient) {
    client.ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(String(data)) as { op?: string; entries?: Delivered[]; messages?: Delivered[] };
      const entries = frame.op === 'push' ? frame.entries : frame.op === 'group.push' ? frame.messages : undefined;
      for (const entry of entries ?? []) {
        const key = `${frame.op}:${entry.appinfo}`;
        this.seen.set(key, entry);
        this.waiting.get(key)?.(entry);
      }
    });
  }

  next(op: 'push' | 'group.push', a: string): Promise<Delivered> {
    const key = `${op}:${a}`;
    const seen = this.seen.get(key);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${op} of ${a} within 15 s`)), 15_000);
      this.waiting.set(key, (entry) => {
        clearTimeout(timer);
        this.waiting.delete(key);
        resolve(entry);
      });
    });
  }
}

interface Http {
  send(body: string | Uint8Array): Promise<{ status: number; json: Record<string, unknown> }>;
  sync(maxSeq: number, limit: number): Promise<WireEntry[]>;
}

async function httpAs(stack: RoundTripStack, user: string): Promise<Http> {
  const token = await issueToken({ secret: SECRET, user, tenant: stack.tenant, ttlSeconds: 3600 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    async send(body) {
      const res = await fetch(`${stack.httpUrl}/v1/send`, { method: 'POST', headers, body });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
    async sync(maxSeq, limit) {
      const res = await fetch(`${stack.httpUrl}/v1/sync?maxSeq=${maxSeq}&limit=${limit}`, { headers });
      expect(res.status).toBe(200);
      return ((await res.json()) as { entries: WireEntry[] }).entries;
    },
  };
}

/** The entry with appinfo `a` in `c`'s inbox after `after` (it is there: its push came first). */
async function synced(c: TestClient, after: number, a: string): Promise<WireEntry> {
  const page = await c.ok<{ entries: WireEntry[] }>('sync', { maxSeq: after, limit: 1000 });
  const entry = page.entries.find((e) => e.appinfo === a && e.kind === 'msg');
  if (!entry) throw new Error(`sync after ${after} of ${c.user} lacks ${a}`);
  return entry;
}

export function describeRoundTrip(mode: string, stack: () => RoundTripStack): void {
  describe(`bodies round-trip byte for byte (${mode})`, () => {
    it('push, sync (WebSocket and HTTP), history, group.push and group.history return what was sent', async () => {
      const s = stack();
      const [aliceId, bobId, carolId] = [s.user('alice'), s.user('bob'), s.user('carol')];
      const [alice, bob] = await Promise.all([s.connect(aliceId), s.connect(bobId)]);
      await s.connect(carolId);
      const [aliceHttp, bobHttp] = await Promise.all([httpAs(s, aliceId), httpAs(s, bobId)]);
      const [bobPushes, alicePushes] = [new PushWatch(bob), new PushWatch(alice)];
      const writeGroup = (await alice.ok<{ group: string }>('group.create', { name: 'w', members: [bobId] })).group;
      const readGroup = (await alice.ok<{ group: string }>('group.create', { name: 'r', members: [bobId, carolId, ...s.hugeFiller] }))
        .group;
      expect(await alice.ok('group.info', { group: writeGroup })).toMatchObject({ fanout: 'write' });
      expect(await alice.ok('group.info', { group: readGroup })).toMatchObject({ fanout: 'read' });
      const to = { user: { user: bobId }, 'write-group': { group: writeGroup }, 'read-group': { group: readGroup } };
      let runs = 0;
      const started = Date.now();

      await fc.assert(
        fc.asyncProperty(
          hostileBody,
          hostileType,
          fc.constantFrom<Target>('user', 'write-group', 'read-group'),
          fc.boolean(),
          async (body, type, target, viaHttp) => {
            runs++;
            const a = appinfo();
            const sent = JSON.stringify(body);
            const frame = { appinfo: a, to: to[target], type, body };
            if (viaHttp) expect(await aliceHttp.send(JSON.stringify(frame))).toMatchObject({ status: 200, json: { ok: true } });
            else await alice.ok('send', frame);
            const back: Array<[string, Delivered]> = [];
            if (target === 'read-group') {
              const pushed = await bobPushes.next('group.push', a);
              const page = await bob.ok<{ messages: Delivered[] }>('group.history', {
                group: readGroup,
                afterGseq: (pushed.gseq ?? 1) - 1,
                limit: 1,
              });
              back.push(['group.push', pushed], ['group.history', page.messages[0] as Delivered]);
              // The sender's own copy sits in its inbox.
              const own = await alicePushes.next('push', a);
              back.push(['sender push', own], ['sender sync', await synced(alice, own.seq - 1, a)]);
            } else {
              const pushed = await bobPushes.next('push', a);
              const page = await bob.ok<{ entries: WireEntry[] }>('history', { beforeSeq: pushed.seq + 1, limit: 1 });
              back.push(['push', pushed], ['sync', await synced(bob, pushed.seq - 1, a)], ['history', page.entries[0] as WireEntry]);
              back.push(['http sync', (await bobHttp.sync(pushed.seq - 1, 1))[0] as WireEntry]);
            }
            for (const [path, entry] of back) {
              expect({ path, appinfo: entry?.appinfo, type: entry?.type, body: JSON.stringify(entry?.body) }).toEqual({
                path,
                appinfo: a,
                type,
                body: sent,
              });
            }
          },
        ),
        { numRuns: s.numRuns, endOnFailure: true },
      );
      console.log(`[roundtrip ${mode}] ${runs} runs in ${Date.now() - started} ms`);
    }, 120_000);

    it('an unpaired surrogate anywhere in a frame is refused with BAD_REQUEST, over WebSocket and HTTP, and stores nothing', async () => {
      const s = stack();
      const [httpMalloryId, bobId] = [s.user('mallory'), s.user('bob')];
      const bob = await s.connect(bobId);
      const malloryHttp = await httpAs(s, httpMalloryId);
      // A socket may be refused 20 frames in a burst (then it is closed): a new mallory every 15.
      const mallories: TestClient[] = [];
      let refusedOnSocket = 0;
      const mallory = async (): Promise<TestClient> => {
        const current = mallories.at(-1);
        if (current && refusedOnSocket++ < 15) return current;
        refusedOnSocket = 1;
        const fresh = await s.connect(s.user('mallory'));
        mallories.push(fresh);
        return fresh;
      };
      const place = fc.constantFrom('body', 'type', 'appinfo', 'extra field', 'field name');
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(withLoneSurrogate, loneSurrogate, place, fc.boolean(), async (badBody, bad, where, viaHttp) => {
          runs++;
          const frame: Record<string, unknown> = { appinfo: appinfo(), to: { user: bobId }, type: 'text', body: { ok: 1 } };
          if (where === 'body') frame['body'] = badBody;
          if (where === 'type') frame['type'] = `t${bad}`;
          if (where === 'appinfo') frame['appinfo'] = `${String(frame['appinfo'])}${bad}`;
          if (where === 'extra field') frame['note'] = bad;
          if (where === 'field name') frame[bad] = 1;
          if (viaHttp) {
            expect(await malloryHttp.send(JSON.stringify(frame))).toMatchObject({
              status: 400,
              json: { ok: false, error: { code: 'BAD_REQUEST' } },
            });
          } else {
            expect(await (await mallory()).call('send', frame)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
          }
        }),
        { numRuns: s.numRuns },
      );
      // Two appinfos that differ only in an unpaired surrogate: both refused, neither stored.
      for (const unit of ['\uD800', '\uDBFF', '\uDC00']) {
        expect(await (await mallory()).call('send', { appinfo: `twin${unit}`, to: { user: bobId }, type: 'text', body: {} })).toMatchObject(
          { error: { code: 'BAD_REQUEST' } },
        );
      }
      expect(await (await mallory()).call('group.create', { name: 'g\uD800', members: [bobId] })).toMatchObject({
        error: { code: 'BAD_REQUEST' },
      });
      // Bytes that are not UTF-8 are refused too, not stored as U+FFFD.
      const notUtf8 = Buffer.concat([
        Buffer.from(`{"appinfo":"${appinfo()}","to":{"user":"${bobId}"},"type":"text","body":"`),
        Buffer.from([0xed, 0xa0, 0x80, 0xff]),
        Buffer.from('"}'),
      ]);
      expect(await malloryHttp.send(notUtf8)).toMatchObject({ status: 400, json: { error: { code: 'BAD_REQUEST' } } });
      const last = await mallory();
      last.ws.send(notUtf8, { binary: true });
      expect(await waitFor(() => last.unmatched.shift())).toMatchObject({ id: null, ok: false, error: { code: 'BAD_REQUEST' } });

      // Nothing of it reached anyone: a marker sent after everything is all bob's inbox holds.
      const marker = appinfo();
      const bobPushes = new PushWatch(bob);
      await last.ok('send', { appinfo: marker, to: { user: bobId }, type: 'text', body: 'marker' });
      await bobPushes.next('push', marker);
      expect((await bob.syncAll()).map((e) => e.appinfo)).toEqual([marker]);
      for (const m of mallories) expect((await m.syncAll()).filter((e) => e.appinfo !== marker)).toEqual([]);
      expect(runs).toBe(s.numRuns);
    }, 120_000);

    it(`a body nested ${MAX_BODY_DEPTH} levels round-trips; one more level is refused`, async () => {
      const s = stack();
      const [aliceId, bobId] = [s.user('alice'), s.user('bob')];
      const [alice, bob] = await Promise.all([s.connect(aliceId), s.connect(bobId)]);
      const bobPushes = new PushWatch(bob);
      const deepest = nested('\uD83D\uDE00', MAX_BODY_DEPTH);
      const a = appinfo();
      await alice.ok('send', { appinfo: a, to: { user: bobId }, type: 'text', body: deepest });
      const pushed = await bobPushes.next('push', a);
      for (const entry of [pushed, await synced(bob, 0, a)]) expect(JSON.stringify(entry.body)).toBe(JSON.stringify(deepest));
      const tooDeep: JsonValue = nested(1, MAX_BODY_DEPTH + 1);
      expect(await alice.call('send', { appinfo: appinfo(), to: { user: bobId }, type: 'text', body: tooDeep })).toMatchObject({
        error: { code: 'BAD_REQUEST' },
      });
      expect((await bob.syncAll()).map((e) => e.appinfo)).toEqual([a]);
    });
  });
}
