/**
 * The v1.1 conversation ops end to end (issue #26), written once and run against the embedded
 * server (conversations.e2e.test.ts) and the distributed stack (apps/worker/test). After every
 * step, `conversations` must equal core's recount of the inbox. The recount's input is every
 * entry an observer device has ever synced: sync drops entries once they are deleted or
 * cleared, so the observer syncs after each step, before anything it got can be hidden.
 */
import { conversationKey, recountConversations, type ConvRecord, type Entry } from '@seqline/core';
import { describe, expect, it } from 'vitest';
import { appinfo, waitFor, type TestClient, type WireEntry as V1WireEntry } from './harness.ts';

/** An entry with the v1.1 fields. */
type WireEntry = V1WireEntry & { mentions?: string[]; edit?: { appinfo: string; body: unknown }; upToSeq?: number };

export interface ConversationScenarioContext {
  connect(user: string): Promise<TestClient>;
  /** A user id unique to this run. */
  user(prefix: string): string;
}

interface WireConv {
  conv: { type: 'user' | 'group'; id: string };
  lastSeq: number;
  last: WireEntry | null;
  readSeq: number;
  unread: number;
  mentions: number;
  clearedSeq: number;
  asOfSeq: number;
  messages?: WireEntry[];
}
interface ConversationsReply {
  convs: WireConv[];
  headSeq: number;
  hasMore: boolean;
}
interface SyncReply {
  entries: WireEntry[];
  headSeq: number;
  hasMore: boolean;
  convs: WireConv[];
}

/** The fields the recount states, as the wire shows them (`last` stands for lastMsgSeq). */
function comparable(c: WireConv) {
  const { conv, lastSeq, readSeq, clearedSeq, unread, mentions, asOfSeq } = c;
  return { key: conversationKey(conv), lastSeq, lastMsgSeq: c.last?.seq ?? 0, readSeq, clearedSeq, unread, mentions, asOfSeq };
}
function fromRecount(r: ConvRecord) {
  const { conv, lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq } = r;
  return { key: conversationKey(conv), lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq };
}
const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);

/** One device that has seen every entry of its inbox, in order. */
class Observer {
  readonly log = new Map<number, WireEntry>();
  private maxSeq = 0;
  constructor(readonly device: TestClient) {}

  async catchUp(): Promise<void> {
    for (;;) {
      const r: SyncReply = await this.device.ok<SyncReply>('sync', { maxSeq: this.maxSeq, limit: 1000 });
      for (const e of r.entries) this.log.set(e.seq, e);
      this.maxSeq = r.entries.at(-1)?.seq ?? this.maxSeq;
      if (!r.hasMore) return;
    }
  }

  /** Waits until the inbox holds an entry matching `match` (fanout may be asynchronous). */
  async waitForEntry(what: string, match: (e: WireEntry) => boolean): Promise<WireEntry> {
    return waitFor(
      async () => {
        await this.catchUp();
        return [...this.log.values()].find(match);
      },
      15_000,
      what,
    );
  }

  recount(): ReturnType<typeof fromRecount>[] {
    const entries = [...this.log.values()] as unknown as Entry[];
    return [...recountConversations(entries, this.device.user).values()].map(fromRecount).sort(byKey);
  }

  /**
   * `conversations` equals the recount of everything seen. The distributed index is written by
   * the inbox owner after the entries, so it may trail them for a moment: waited for.
   */
  async expectIndexEqualsRecount(step: string): Promise<WireConv[]> {
    let index: unknown = null;
    try {
      return await waitFor(
        async () => {
          await this.catchUp();
          const list = await listAll(this.device);
          index = list.map(comparable).sort(byKey);
          return JSON.stringify(index) === JSON.stringify(this.recount()) ? list : undefined;
        },
        15_000,
        `conversations to equal the recount after ${step}`,
      );
    } catch (err) {
      expect(index, `conversations after ${step}`).toEqual(this.recount());
      throw err;
    }
  }
}

async function listAll(device: TestClient): Promise<WireConv[]> {
  const out: WireConv[] = [];
  let beforeLastSeq: number | undefined;
  for (;;) {
    // Pages of 2, so that paging by beforeLastSeq is exercised at every step.
    const r = await device.ok<ConversationsReply>('conversations', { limit: 2, ...(beforeLastSeq ? { beforeLastSeq } : {}) });
    for (const c of r.convs) {
      // Newest activity first, each conversation once: a repeat would page forever.
      if (c.lastSeq >= (out.at(-1)?.lastSeq ?? Infinity)) throw new Error(`conversations out of order: ${JSON.stringify(r.convs)}`);
      out.push(c);
    }
    beforeLastSeq = r.convs.at(-1)?.lastSeq;
    if (!r.hasMore || beforeLastSeq === undefined) return out;
  }
}

function find(list: WireConv[], type: 'user' | 'group', id: string): WireConv {
  const c = list.find((x) => x.conv.type === type && x.conv.id === id);
  if (!c) throw new Error(`no conversation ${type}:${id} in ${JSON.stringify(list.map((x) => x.conv))}`);
  return c;
}

export function describeConversations(mode: string, ctx: () => ConversationScenarioContext): void {
  describe(`conversations (${mode})`, () => {
    it('two devices, reads, recall, edit, delete, clear and a fresh device all agree with the recount', async () => {
      const c = ctx();
      const [alice, bob, carol] = [c.user('alice'), c.user('bob'), c.user('carol')];
      const phone = await c.connect(alice);
      const laptop = await c.connect(alice);
      const bobDev = await c.connect(bob);
      const carolDev = await c.connect(carol);
      const seen = new Observer(await c.connect(alice));
      const group = c.user('g');

      // Step 1: three 1:1 messages from bob, a group with three messages (two mention alice).
      const m = [appinfo(), appinfo(), appinfo()];
      for (const [i, a] of m.entries()) await bobDev.ok('send', { appinfo: a, to: { user: alice }, type: 'text', body: { i } });
      await carolDev.ok('group.create', { name: 'team', members: [alice, bob], group });
      const g = [appinfo(), appinfo(), appinfo()];
      await carolDev.ok('send', { appinfo: g[0], to: { group }, type: 'text', body: { g: 0 }, mentions: [alice] });
      await carolDev.ok('send', { appinfo: g[1], to: { group }, type: 'text', body: { g: 1 } });
      await bobDev.ok('send', { appinfo: g[2], to: { group }, type: 'text', body: { g: 2 }, mentions: ['@all'] });
      const copies = [...m, ...g];
      for (const a of copies) await seen.waitForEntry(`copy ${a}`, (e) => e.appinfo === a);
      expect(seen.log.get([...seen.log.values()].find((e) => e.appinfo === g[0])!.seq)!.mentions).toEqual([alice]);
      let list = await seen.expectIndexEqualsRecount('the sends');
      expect(find(list, 'user', bob)).toMatchObject({ unread: 3, mentions: 0 });
      expect(find(list, 'group', group)).toMatchObject({ unread: 3, mentions: 2 });
      const seqOf = (a: string) => [...seen.log.values()].find((e) => e.appinfo === a)!.seq;

      // Step 2: the phone reads bob's chat up to m[1]; the laptop's next sync says unread 1.
      await phone.ok('read', { conv: { type: 'user', id: bob }, upToSeq: seqOf(m[1]!) });
      const afterRead = await waitFor(async () => {
        const r = await laptop.ok<SyncReply>('sync', { maxSeq: seqOf(m[2]!) });
        const conv = r.convs.find((x) => x.conv.id === bob);
        return conv?.readSeq === seqOf(m[1]!) ? conv : undefined;
      });
      expect(afterRead.unread).toBe(1);
      // A read cursor never moves back.
      await laptop.ok('read', { conv: { type: 'user', id: bob }, upToSeq: seqOf(m[0]!) });
      list = await seen.expectIndexEqualsRecount('the reads');
      expect(find(list, 'user', bob)).toMatchObject({ readSeq: seqOf(m[1]!), unread: 1 });

      // Step 3: bob recalls m[2], the one still unread: it stops counting.
      await bobDev.ok('recall', { appinfo: m[2] });
      await seen.waitForEntry('the recall', (e) => e.kind === 'recall' && e.recall?.appinfo === m[2]);
      list = await seen.expectIndexEqualsRecount('the recall');
      expect(find(list, 'user', bob)).toMatchObject({ unread: 0 });

      // Step 4: bob edits g[2] (the group's last message); others may not edit it: an edit names
      // the caller's own message (an appinfo is unique per sender), so theirs is not found.
      await bobDev.ok('edit', { appinfo: g[2], body: { g: 2, edited: true } });
      for (const [who, a] of [
        [phone, g[2]],
        [phone, m[0]],
        [carolDev, g[2]],
      ] as const) {
        const r = await who.call('edit', { appinfo: a, body: 'hijack' });
        expect(r.ok ? 'ok' : r.error.code, `edit of ${a} by ${who.user}`).toBe('NOT_FOUND');
      }
      await seen.waitForEntry('the edit', (e) => e.kind === 'edit' && e.edit?.appinfo === g[2]);
      list = await seen.expectIndexEqualsRecount('the edit');
      expect(find(list, 'group', group).last).toMatchObject({ appinfo: g[2], body: { g: 2, edited: true } });
      const groupHistory = await laptop.ok<{ entries: WireEntry[] }>('history', { conv: { type: 'group', id: group } });
      expect(groupHistory.entries.find((e) => e.appinfo === g[2])).toMatchObject({ body: { g: 2, edited: true } });

      // Step 5: the phone deletes g[0] (unread, mentioning alice); the laptop no longer sees it.
      await phone.ok('delete', { seqs: [seqOf(g[0]!)] });
      list = await seen.expectIndexEqualsRecount('the delete');
      expect(find(list, 'group', group)).toMatchObject({ unread: 2, mentions: 1 });
      const laptopAll = await laptop.syncAll();
      expect(laptopAll.some((e) => e.appinfo === g[0])).toBe(false);
      const laptopHistory = await laptop.ok<{ entries: WireEntry[] }>('history', { conv: { type: 'group', id: group } });
      expect(laptopHistory.entries.map((e) => e.appinfo)).not.toContain(g[0]);

      // Step 6: the laptop clears bob's chat; the phone sees none of it any more.
      await laptop.ok('clear', { conv: { type: 'user', id: bob } });
      list = await seen.expectIndexEqualsRecount('the clear');
      expect(find(list, 'user', bob)).toMatchObject({ unread: 0, last: null, clearedSeq: find(list, 'user', bob).lastSeq });
      const phoneAll = await phone.syncAll();
      expect(phoneAll.filter((e) => e.kind === 'msg' && e.conv.id === bob)).toEqual([]);
      expect((await phone.ok<{ entries: WireEntry[] }>('history', { conv: { type: 'user', id: bob } })).entries).toEqual([]);

      // Step 7: a fresh device bootstraps in one call, then syncs from headSeq: exactly the rest.
      const fresh = await c.connect(alice);
      const boot = await fresh.ok<ConversationsReply>('conversations', { limit: 50, lastMessages: 2 });
      expect(boot.convs.map(comparable).sort(byKey)).toEqual(list.map(comparable).sort(byKey));
      const groupBoot = find(boot.convs, 'group', group);
      expect(groupBoot.messages?.map((e) => e.appinfo)).toEqual([g[1], g[2]]);
      expect(groupBoot.messages?.at(-1)).toMatchObject({ body: { g: 2, edited: true } });
      const late = appinfo();
      await bobDev.ok('send', { appinfo: late, to: { user: alice }, type: 'text', body: { late: true } });
      await seen.waitForEntry('the late message', (e) => e.appinfo === late);
      const rest = await fresh.syncAll(boot.headSeq);
      const expected = (await phone.syncAll()).filter((e) => e.seq > boot.headSeq);
      expect(rest.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
      expect(rest.map((e) => e.appinfo)).toContain(late);
      list = await seen.expectIndexEqualsRecount('the late message');
      expect(find(list, 'user', bob)).toMatchObject({ unread: 1, last: { appinfo: late } });
    }, 120_000);
  });
}
