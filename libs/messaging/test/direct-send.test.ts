/**
 * 1:1 sends over the real embedded engine: the recipient's copy travels with the sender's
 * (InboxWriter.appendThen); when that follow-up fails or a resend skips it, the copy still
 * arrives exactly once — through the durable fanout job, or re-delivered from the original.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type {
  AppendOutcome,
  ChainedAppend,
  Entry,
  FollowUpResult,
  InboxAppend,
  InboxAppendThen,
  InboxKey,
  InboxReceipt,
  InboxWriter,
} from '@seqline/core';
import type { InboxOwner } from '@seqline/seq';
import { createMessaging, startWorkers, type Messaging, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

/** The embedded owner, with the follow-up of appendThen optionally dropped (a recipient owner that times out). */
class FlakyFollowUps implements InboxWriter {
  dropFollowUps = false;
  readonly chained: Array<{ next: FollowUpResult }> = [];
  constructor(private readonly owner: InboxOwner) {}
  append(input: InboxAppend): Promise<AppendOutcome[]> {
    return this.owner.append(input);
  }
  async appendThen(input: InboxAppendThen): Promise<ChainedAppend> {
    const result = this.dropFollowUps
      ? { outcomes: await this.owner.append({ inbox: input.inbox, entries: input.entries }), next: 'failed' as const }
      : await this.owner.appendThen(input);
    this.chained.push({ next: result.next });
    return result;
  }
  addReceipt(input: InboxReceipt): Promise<void> {
    return this.owner.addReceipt(input);
  }
  headSeq(inbox: InboxKey): Promise<number> {
    return this.owner.headSeq(inbox);
  }
  rebuildConversations(inbox: InboxKey): ReturnType<InboxWriter['rebuildConversations']> {
    return this.owner.rebuildConversations(inbox);
  }
  close(): Promise<void> {
    return this.owner.close();
  }
}

let rig: EmbeddedRig;
let owner: InboxOwner;
let writer: FlakyFollowUps;
let messaging: Messaging;
let workers: Workers;
const alice = { tenant: 't', user: 'alice' };
const bobInbox = inboxKey('t', 'bob');

beforeAll(async () => {
  rig = await openEmbeddedRig('direct', { wrapInbox: (inner) => (writer = new FlakyFollowUps(inner)) });
  owner = rig.owner;
  messaging = createMessaging(rig.deps);
  workers = await startWorkers(rig.deps);
});
afterAll(async () => {
  workers.stop();
  await rig.close();
});

async function copiesAtBob(appinfo: string): Promise<Entry[]> {
  return (await rig.engine.timeline.readAfter({ inbox: bobInbox, afterSeq: 0, limit: 10_000 })).filter((e) => e.appinfo === appinfo);
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('1:1 send with the recipient copy chained to the sender copy', () => {
  it('delivers in the same call: the recipient holds one copy, with its conv pointing at the sender', async () => {
    writer.dropFollowUps = false;
    const sent = await messaging.send(alice, { appinfo: 'direct-1', to: { user: 'bob' }, type: 'text', body: { t: 1 } });
    expect(writer.chained.at(-1)).toEqual({ next: 'appended' });
    const copies = await copiesAtBob('direct-1');
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({ from: 'alice', conv: { type: 'user', id: 'alice' }, sendTime: sent.sendTime });
  });

  it('a failed follow-up goes through the durable fanout job: still exactly one copy', async () => {
    writer.dropFollowUps = true;
    const sent = await messaging.send(alice, { appinfo: 'direct-2', to: { user: 'bob' }, type: 'text', body: { t: 2 } });
    expect(writer.chained.at(-1)).toEqual({ next: 'failed' });
    expect(sent.duplicate).toBe(false);
    await eventually('the job delivered the copy', async () => (await copiesAtBob('direct-2')).length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(await copiesAtBob('direct-2')).toHaveLength(1);
  });

  it('a resend skips the follow-up and re-delivers the original as stored, never a second copy', async () => {
    // The first attempt stored the sender's copy but no recipient copy (it stopped in between).
    writer.dropFollowUps = true;
    const first = await owner.append({
      inbox: inboxKey('t', 'alice'),
      entries: [
        {
          kind: 'msg',
          appinfo: 'direct-3',
          from: 'alice',
          sendTime: 1_000,
          type: 'text',
          body: { t: 'original' },
          conv: { type: 'user', id: 'bob' },
        },
      ],
    });
    writer.dropFollowUps = false;
    const resent = await messaging.send(alice, { appinfo: 'direct-3', to: { user: 'bob' }, type: 'text', body: { t: 'resend' } });
    expect(resent).toMatchObject({ seq: first[0]!.seq, duplicate: true, sendTime: 1_000 });
    expect(writer.chained.at(-1)).toEqual({ next: 'skipped' });
    const copies = await copiesAtBob('direct-3');
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({ sendTime: 1_000, body: { t: 'original' } });
    await messaging.send(alice, { appinfo: 'direct-3', to: { user: 'bob' }, type: 'text', body: { t: 'again' } });
    expect(await copiesAtBob('direct-3')).toHaveLength(1);
  });
});
