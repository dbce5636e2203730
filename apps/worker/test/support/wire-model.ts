/**
 * The copy-holder model's rig on the distributed stack (@seqline/testing, copy-holders/): the
 * messaging API over one socket per user through the gateway (the wire protocol), the truth
 * read straight from CQL, tiers switched live through the gateway's admin API, and "every job
 * done" read from the namespace's JetStream streams.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { issueAdminToken, type WireConv, type WireEntry } from '@seqline/protocol';
import type { Conv, Entry, TierThresholds } from '@seqline/core';
import type { ModelCaller, ModelConvState, ModelMessaging, ModelPush } from '@seqline/testing';
import { SECRET, type TestClient } from '../../../server/test/harness.ts';

/** The documented wire fields are the entry's own (protocol's WireEntry is an Entry without internals). */
const entryOf = (w: WireEntry): Entry => w;

function stateOf(w: WireConv): ModelConvState {
  const { conv, last, lastSeq, readSeq, unread, mentions, clearedSeq, asOfSeq } = w;
  return { conv, last: last === null ? null : entryOf(last), lastSeq, readSeq, unread, mentions, clearedSeq, asOfSeq };
}

/** Each user's calls go through its own socket, opened at first use and kept for the run. */
export class WireMessaging implements ModelMessaging {
  private readonly clients = new Map<string, Promise<TestClient>>();

  constructor(private readonly connectAs: (user: string) => Promise<TestClient>) {}

  client(user: string): Promise<TestClient> {
    let client = this.clients.get(user);
    if (client === undefined) this.clients.set(user, (client = this.connectAs(user)));
    return client;
  }

  /** Every inbox push each of `users` got so far (their sockets opened now, before the run's first op). */
  async watchPushes(users: readonly string[]): Promise<{ pushes(): Map<string, ModelPush[]>; stop(): void }> {
    const clients = await Promise.all(users.map((u) => this.client(u)));
    return {
      pushes: () =>
        new Map(
          clients.map((c) => [
            c.user,
            c.pushes.map((p): ModelPush => {
              const wire = p as unknown as { prevSeq: number; entries: WireEntry[]; convs?: WireConv[] };
              return { prevSeq: wire.prevSeq, entries: wire.entries.map(entryOf), ...(wire.convs && { convs: wire.convs.map(stateOf) }) };
            }),
          ]),
        ),
      stop: () => {
        for (const c of clients) c.close();
        for (const u of users) this.clients.delete(u);
      },
    };
  }

  private async ok<T>(caller: ModelCaller, op: string, args: Record<string, unknown>): Promise<T> {
    return (await this.client(caller.user)).ok<T>(op, args);
  }

  createGroup(caller: ModelCaller, input: { name: string; members: string[]; id?: string }): Promise<unknown> {
    return this.ok(caller, 'group.create', {
      name: input.name,
      members: input.members,
      ...(input.id !== undefined && { group: input.id }),
    });
  }
  addMembers(caller: ModelCaller, group: string, members: string[]): Promise<unknown> {
    return this.ok(caller, 'group.add', { group, members });
  }
  removeMembers(caller: ModelCaller, group: string, members: string[]): Promise<unknown> {
    return this.ok(caller, 'group.remove', { group, members });
  }
  groupInfo(caller: ModelCaller, group: string): Promise<{ fanout: 'write' | 'read' }> {
    return this.ok(caller, 'group.info', { group });
  }
  send(caller: ModelCaller, input: Record<string, unknown>): Promise<unknown> {
    return this.ok(caller, 'send', input);
  }
  recall(caller: ModelCaller, appinfo: string, from?: string): Promise<unknown> {
    return this.ok(caller, 'recall', { appinfo, ...(from !== undefined && { from }) });
  }
  edit(caller: ModelCaller, input: Record<string, unknown>): Promise<{ seq: number }> {
    return this.ok(caller, 'edit', input);
  }
  async conversations(
    caller: ModelCaller,
    input: { limit: number; lastMessages: number },
  ): Promise<{ convs: Array<{ state: ModelConvState; messages?: Entry[] }>; headSeq: number }> {
    const r = await this.ok<{ convs: WireConv[]; headSeq: number }>(caller, 'conversations', input);
    return {
      headSeq: r.headSeq,
      convs: r.convs.map((c) => ({ state: stateOf(c), ...(c.messages && { messages: c.messages.map(entryOf) }) })),
    };
  }
  async conversationHistory(caller: ModelCaller, conv: Conv, beforeSeq: number, limit: number): Promise<{ entries: Entry[] }> {
    const r = await this.ok<{ entries: WireEntry[] }>(caller, 'history', { conv, beforeSeq, limit });
    return { entries: r.entries.map(entryOf) };
  }
  async sync(
    caller: ModelCaller,
    maxSeq: number,
    limit: number,
  ): Promise<{ entries: Entry[]; convs: ModelConvState[]; convsPending?: Conv[] }> {
    const r = await this.ok<{ entries: WireEntry[]; convs: WireConv[]; convsPending?: Conv[] }>(caller, 'sync', { maxSeq, limit });
    return { entries: r.entries.map(entryOf), convs: r.convs.map(stateOf), ...(r.convsPending && { convsPending: r.convsPending }) };
  }
}

/** PUT /v1/admin/tiers on a gateway: it applies there at once, in every other process within its settings poll. */
export async function putTiers(gatewayHttpUrl: string, tiers: TierThresholds): Promise<void> {
  const token = await issueAdminToken({ secret: SECRET, name: 'copy-holders-model', ttlSeconds: 600 });
  const res = await fetch(`${gatewayHttpUrl}/v1/admin/tiers`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(tiers),
  });
  if (!res.ok) throw new Error(`PUT tiers answered ${res.status}: ${await res.text()}`);
}

/**
 * Until the namespace's jobs stream is empty: its retention is work-queue (a job leaves it when
 * acked, after its handler and any job it enqueued), so none left means every job enqueued so far
 * ran. A dead letter fails the wait.
 */
export async function jobsDrained(jsm: JetStreamManager, namespace: string, timeoutMs = 30_000): Promise<void> {
  const prefix = namespace.toUpperCase();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { messages } = (await jsm.streams.info(`${prefix}_JOBS`)).state;
    if (messages === 0) break;
    if (Date.now() > deadline) throw new Error(`${messages} jobs still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const dead = (await jsm.streams.info(`${prefix}_DLQ`)).state.messages;
  if (dead > 0) throw new Error(`${dead} jobs dead-lettered`);
}
