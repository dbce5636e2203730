/**
 * The rule every `convs` the copy-holder model meets must keep (docs/protocol.md, sync and
 * pushes): each state at or past every entry naming its conversation, recall and edit entries
 * included; a sync carries every conversation its entries name that the index holds — or,
 * where the index may trail its entries (distributed), names it in `convsPending`.
 */
import { expect } from 'vitest';
import { conversationKey, conversationTouch, inboxKey, recountInboxIndex, type Conv, type Entry } from '@seqline/core';
import type { ModelConvState, ModelMessaging, ModelStores } from './model.ts';

export interface SyncAnswer {
  entries: Entry[];
  convs: ModelConvState[];
  convsPending?: Conv[];
}

/**
 * Checks one sync answer of `u` against `inbox`, the inbox up to (at least) the answer's last
 * entry: what the index holds is the recount of it. Says whether the answer named any pending.
 */
export function checkSyncAnswer(sync: SyncAnswer, inbox: readonly Entry[], u: string, indexMayTrail: boolean): boolean {
  const pending = new Set((sync.convsPending ?? []).map(conversationKey));
  if (!indexMayTrail) expect([...pending], `${u}: sync convsPending`).toEqual([]);
  const last = sync.entries.at(-1)?.seq ?? 0;
  const held = recountInboxIndex(
    inbox.filter((e) => e.seq <= last),
    u,
  ).records;
  for (const key of namedConversations(sync.entries)) {
    if (!held.has(key) || pending.has(key)) continue;
    expect(
      sync.convs.some((s) => conversationKey(s.conv) === key),
      `${u}: sync after ${sync.entries[0]?.seq ?? 0} carries ${key}`,
    ).toBe(true);
  }
  expectStatesCover(sync.entries, sync.convs, `${u}: sync convs`);
  return pending.size > 0;
}

/**
 * Each user's sync from where its last one stopped, run while jobs may still be running (the
 * moment the index can trail the entries), as a device tailing its inbox would.
 */
export class TailSyncs {
  private readonly cursors = new Map<string, number>();
  answers = 0;
  pendingAnswers = 0;

  constructor(
    private readonly d: { messaging: ModelMessaging; stores: ModelStores; tenant: string; indexMayTrail: boolean },
    private readonly users: readonly string[],
  ) {}

  async check(): Promise<void> {
    await Promise.all(
      this.users.map(async (u) => {
        const after = this.cursors.get(u) ?? 0;
        const sync = await this.d.messaging.sync({ tenant: this.d.tenant, user: u }, after, 1000);
        if (sync.entries.length === 0) return;
        // The inbox as stored now holds at least every entry the answer returned.
        const inbox = await this.d.stores.timeline.readAfter({ inbox: inboxKey(this.d.tenant, u), afterSeq: 0, limit: 100_000 });
        this.answers++;
        if (checkSyncAnswer(sync, inbox, u, this.d.indexMayTrail)) this.pendingAnswers++;
        this.cursors.set(u, sync.entries.at(-1)?.seq ?? after);
      }),
    );
  }
}

export function namedConversations(entries: readonly Entry[]): Set<string> {
  const keys = new Set<string>();
  for (const e of entries) {
    const t = conversationTouch(e);
    if (t !== null && 'conv' in t) keys.add(conversationKey(t.conv));
  }
  return keys;
}

export function expectStatesCover(entries: readonly Entry[], states: readonly ModelConvState[], what: string): void {
  for (const e of entries) {
    const t = conversationTouch(e);
    if (t === null || !('conv' in t)) continue;
    const state = states.find((s) => conversationKey(s.conv) === conversationKey(t.conv));
    if (state !== undefined)
      expect(state.asOfSeq, `${what}: ${conversationKey(t.conv)} at seq ${e.seq} (${e.kind})`).toBeGreaterThanOrEqual(e.seq);
  }
}
