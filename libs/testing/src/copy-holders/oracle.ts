/**
 * What the copy-holder model test expects, computed without the service's read paths: who
 * holds what from the inboxes themselves; each user's view of the group from core's recount
 * of their inbox plus the stream rows their windows allow (read from the stores); and the
 * rule that every state sync or a push carries is at or past every entry naming it. Where the
 * index may trail its entries (distributed), it accepts what the protocol allows then: a sync
 * naming a conversation in `convsPending` instead of its state, a push without `convs`.
 */
import { expect } from 'vitest';
import {
  canReadGseq,
  conversationItemKey,
  conversationKey,
  groupKey,
  holdsStreamCopy,
  inboxKey,
  isActivity,
  recountInboxIndex,
  type Conv,
  type Entry,
  type Json,
} from '@seqline/core';
import { checkSyncAnswer, expectStatesCover, namedConversations } from './convs-check.ts';
import type { GroupModel, ModelConvState, ModelMessaging, ModelStores, SentMessage } from './model.ts';

/** An inbox push as a client gets it (a `group.push` is left out by the collector). */
export interface ModelPush {
  prevSeq: number;
  entries: Entry[];
  convs?: ModelConvState[];
}

export interface OracleDeps {
  stores: ModelStores;
  messaging: ModelMessaging;
  tenant: string;
  /** Every inbox push each user got, in order. */
  pushes: Map<string, ModelPush[]>;
  /** The conversation index may trail the entries (distributed): see the file comment. */
  indexMayTrail: boolean;
}

const INBOX_READ = 100_000;
/** How long the index may take to reach the inbox head once every job is done. */
const INDEX_CATCH_UP_MS = 20_000;

const textOf = (body: Json | undefined): unknown =>
  body !== null && typeof body === 'object' && !Array.isArray(body) ? body.text : undefined;

/** What the checks met of what the index may do when it trails: pushes without convs, syncs naming pending conversations. */
export interface OracleCounts {
  pushesWithConvs: number;
  pushesWithoutConvs: number;
  syncsPending: number;
}

export async function checkModel(d: OracleDeps, model: GroupModel): Promise<OracleCounts> {
  const counts: OracleCounts = { pushesWithConvs: 0, pushesWithoutConvs: 0, syncsPending: 0 };
  const inboxes = new Map<string, Entry[]>();
  for (const u of model.users)
    inboxes.set(u, await d.stores.timeline.readAfter({ inbox: inboxKey(d.tenant, u), afterSeq: 0, limit: INBOX_READ }));
  for (const m of model.sent) checkHolders(model, inboxes, m);
  for (const u of model.users) {
    const inbox = inboxes.get(u) ?? [];
    await indexCaughtUp(d, u, inbox);
    if (model.everMember.has(u)) await checkViews(d, model, u, inbox);
    if (await checkSync(d, u, inbox)) counts.syncsPending++;
    checkPushes(d, d.pushes.get(u) ?? [], u, counts);
  }
  return counts;
}

/** Until `conversations` says its list is exact at the inbox's head (a bounded wait, then a failure). */
async function indexCaughtUp(d: OracleDeps, u: string, inbox: Entry[]): Promise<void> {
  const head = inbox.at(-1)?.seq ?? 0;
  const deadline = Date.now() + INDEX_CATCH_UP_MS;
  for (;;) {
    const { headSeq } = await d.messaging.conversations({ tenant: d.tenant, user: u }, { limit: 1, lastMessages: 0 });
    if (headSeq >= head) return;
    if (Date.now() > deadline) throw new Error(`${u}: the conversation index is at ${headSeq}, the inbox at ${head}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Recall and edit reach exactly the inboxes holding a copy; a send's copies are its snapshot. */
function checkHolders(model: GroupModel, inboxes: Map<string, Entry[]>, m: SentMessage): void {
  const having = (pred: (e: Entry) => boolean) => new Set(model.users.filter((u) => (inboxes.get(u) ?? []).some(pred)));
  const holders = having((e) => e.kind === 'msg' && e.appinfo === m.appinfo && e.from === m.from);
  if (m.holders !== undefined) expect([...holders].sort(), `holders of ${m.appinfo}`).toEqual([...m.holders].sort());
  const recalled = having((e) => e.kind === 'recall' && e.recall?.appinfo === m.appinfo);
  const expectRecalled = m.recallers.size === 0 ? new Set<string>() : new Set([...holders, ...m.recallers]);
  expect([...recalled].sort(), `recall entries of ${m.appinfo}`).toEqual([...expectRecalled].sort());
  for (const edit of m.edits) {
    const edited = having((e) => e.kind === 'edit' && e.appinfo === edit.appinfo);
    expect([...edited].sort(), `edit ${edit.appinfo} of ${m.appinfo}`).toEqual([...holders].sort());
    // Once each (a retried edit stores nothing new).
    for (const u of edited) expect((inboxes.get(u) ?? []).filter((e) => e.appinfo === edit.appinfo)).toHaveLength(1);
  }
}

/** `conversations` (messages, last, counts), `history {conv}` against the recount plus the stream rows the user may read. */
async function checkViews(d: OracleDeps, model: GroupModel, u: string, inbox: Entry[]): Promise<void> {
  const conv: Conv = { type: 'group', id: model.group };
  const convKey = conversationKey(conv);
  const recount = recountInboxIndex(inbox, u);
  const record = recount.records.get(convKey);
  const inboxSide = inbox
    .filter((e) => isActivity(e) && conversationKey(e.conv) === convKey && recount.visible.has(conversationItemKey(convKey, e.seq)))
    .map((e) => {
      const edit = recount.edits.get(e.seq);
      return edit === undefined ? e : { ...e, body: edit.body };
    });
  const stream = await readableStream(d, model, u);
  const caller = { tenant: d.tenant, user: u };

  const history = await d.messaging.conversationHistory(caller, conv, 0, 200);
  expect(
    history.entries.map((e) => e.seq),
    `${u}: history {conv}`,
  ).toEqual(inboxSide.map((e) => e.seq).reverse());

  const list = await d.messaging.conversations(caller, { limit: 500, lastMessages: 50 });
  const listed = list.convs.find((c) => c.state.conv.type === 'group' && c.state.conv.id === model.group);
  if (record === undefined) {
    expect(listed, `${u}: no conversation in the inbox, none listed`).toBeUndefined();
    return;
  }
  if (listed === undefined) throw new Error(`${u}: ${model.group} not listed`);
  const { state } = listed;
  const want = [...inboxSide, ...stream.visible];
  expect((listed.messages ?? []).map((e) => e.appinfo).sort(), `${u}: conversations messages`).toEqual(want.map((e) => e.appinfo).sort());
  for (const e of listed.messages ?? []) {
    const expected = want.find((w) => w.appinfo === e.appinfo);
    expect(textOf(e.body), `${u}: ${e.appinfo} as shown`).toEqual(textOf(expected?.body));
  }
  // `last`: the inbox side's newest, unless the stream's newest was sent later (core's newerMessage).
  const inboxLast = inboxSide.at(-1);
  const streamLast = stream.visible.at(-1);
  const last = streamLast === undefined || (inboxLast !== undefined && inboxLast.sendTime > streamLast.sendTime) ? inboxLast : streamLast;
  expect(state.last?.appinfo, `${u}: last`).toEqual(last?.appinfo);
  expect(textOf(state.last?.body ?? undefined), `${u}: last as shown`).toEqual(textOf(last?.body));
  const { lastSeq, readSeq, clearedSeq, asOfSeq } = state;
  expect({ lastSeq, readSeq, clearedSeq, asOfSeq }, `${u}: the record`).toEqual({
    lastSeq: record.lastSeq,
    readSeq: record.readSeq,
    clearedSeq: record.clearedSeq,
    asOfSeq: record.asOfSeq,
  });
  expect({ unread: state.unread, mentions: state.mentions }, `${u}: counts`).toEqual({
    unread: record.unread + stream.unread,
    mentions: record.mentions + stream.mentions,
  });
  // Nothing recalled shows to anyone who holds it.
  for (const m of model.sent) {
    if (m.recallers.size === 0 || !inbox.some((e) => e.kind === 'msg' && e.appinfo === m.appinfo)) continue;
    expect(
      want.map((e) => e.appinfo),
      `${u}: recalled ${m.appinfo}`,
    ).not.toContain(m.appinfo);
  }
}

/**
 * The stream rows `u` may read (its windows), and of those the messages the list shows from the
 * stream: not recalled there, not held in the inbox (those are the inbox side's). Cursor 0.
 */
async function readableStream(
  d: OracleDeps,
  model: GroupModel,
  u: string,
): Promise<{ visible: Entry[]; unread: number; mentions: number }> {
  const key = groupKey(d.tenant, model.group);
  const membership = await d.stores.groups.getMembership({ key, user: u });
  const rows = (await d.stores.groupStreams.readAfter({ group: key, afterGseq: 0, limit: INBOX_READ })).filter((r) =>
    canReadGseq(membership, r.seq),
  );
  const recalled = new Set(rows.flatMap((r) => (r.kind === 'recall' && r.recall ? [r.recall.appinfo] : [])));
  const visible: Entry[] = [];
  for (const r of rows) {
    if (r.kind !== 'msg' || recalled.has(r.appinfo) || holdsStreamCopy(r, u)) continue;
    let shown = r;
    for (const e of rows) {
      if (e.kind === 'edit' && e.edit?.appinfo === r.appinfo && e.from === r.from && e.edit.editedAt >= (shown.edit?.editedAt ?? -1)) {
        shown = { ...r, body: e.edit.body, edit: e.edit };
      }
    }
    visible.push(shown);
  }
  const fromOthers = visible.filter((r) => r.from !== u);
  return { visible, unread: fromOthers.length, mentions: fromOthers.filter((r) => (r.mentions ?? []).includes('@all')).length };
}

/** sync from 0: the whole inbox, its convs as convs-check.ts says. Says whether it named any pending. */
async function checkSync(d: OracleDeps, u: string, inbox: Entry[]): Promise<boolean> {
  const sync = await d.messaging.sync({ tenant: d.tenant, user: u }, 0, 1000);
  expect(
    sync.entries.map((e) => e.seq),
    `${u}: sync`,
  ).toEqual(inbox.map((e) => e.seq));
  return checkSyncAnswer(sync, inbox, u, d.indexMayTrail);
}

/**
 * Every push whose entries name a conversation carries `convs` (all or none where the index may
 * trail), each at or past the entries naming it.
 */
function checkPushes(d: OracleDeps, pushes: ModelPush[], u: string, counts: OracleCounts): void {
  for (const p of pushes) {
    if (namedConversations(p.entries).size === 0) continue;
    counts[p.convs === undefined ? 'pushesWithoutConvs' : 'pushesWithConvs']++;
    if (p.convs === undefined && d.indexMayTrail) continue;
    expect(p.convs, `${u}: push after ${p.prevSeq} carries convs`).toBeDefined();
    expectStatesCover(p.entries, p.convs ?? [], `${u}: push after ${p.prevSeq}`);
  }
}
