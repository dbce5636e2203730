import {
  buildMessageCopy, ForbiddenError, groupKey, inboxKey, isCurrentMember, NotFoundError, wasMemberAt,
  type Entry, type NewEntry,
} from '@seqline/core';
import type { Caller, SendInput, SendResult } from './api.ts';
import type { MessagingDeps } from './deps.ts';
import { FANOUT_QUEUE, toJson, type FanoutJob } from './jobs.ts';

export function fanoutJobId(tenant: string, appinfo: string): string {
  return `fanout:${tenant}:${appinfo}`;
}

/**
 * Send: the sender's own copy is appended first — that append is the dedup point (I3) and
 * its seq is the answer — then a fanout job is persisted before the send is acknowledged (I4).
 * A resend of an acknowledged-or-not message finds the sender's copy and re-enqueues the
 * fanout, which is idempotent per inbox; this closes the crash window between the two steps.
 */
export async function send(d: MessagingDeps, caller: Caller, input: SendInput): Promise<SendResult> {
  const { tenant, user } = caller;
  const sendTime = d.clock.now();
  let recipients: string[];
  let gkey: string | undefined;
  let conv: Entry['conv'];

  if ('user' in input.to) {
    conv = { type: 'user', id: input.to.user };
    recipients = input.to.user === user ? [] : [input.to.user];
  } else {
    const key = groupKey(tenant, input.to.group);
    const group = await d.groups.getGroup(key);
    if (!group) throw new NotFoundError(`group ${input.to.group} not found`);
    if (!isCurrentMember(await d.groups.getMembership(key, user))) {
      throw new ForbiddenError(`not a member of group ${input.to.group}`);
    }
    conv = { type: 'group', id: input.to.group };
    gkey = key;
    recipients = (await d.groups.listMembers(key)).filter((m) => m !== user);
  }

  const copy: NewEntry = buildMessageCopy({
    appinfo: input.appinfo, from: user, sendTime, type: input.type, body: input.body, conv,
  });
  const [outcome] = await d.writer.append(inboxKey(tenant, user), [copy]);
  if (!outcome) throw new Error('append returned no outcome');

  let entry = copy;
  if (outcome.duplicate) {
    const original = await d.timeline.getEntry(inboxKey(tenant, user), outcome.seq);
    if (original) entry = stripSeq(original);
    if (gkey) recipients = await membersAt(d, gkey, recipients, entry.sendTime);
  }
  const job: FanoutJob = { tenant, entry, recipients, ...(gkey ? { groupKey: gkey } : {}) };
  if (recipients.length > 0) {
    await d.queue.enqueue(FANOUT_QUEUE, fanoutJobId(tenant, input.appinfo), toJson(job));
  }
  return { seq: outcome.seq, sendTime: entry.sendTime, duplicate: outcome.duplicate };
}

/** On a resend, only those who were members when the message was first sent get it. */
async function membersAt(d: MessagingDeps, gkey: string, users: string[], time: number): Promise<string[]> {
  const key = gkey as ReturnType<typeof groupKey>;
  const keep: string[] = [];
  for (const u of users) {
    if (wasMemberAt(await d.groups.getMembership(key, u), time)) keep.push(u);
  }
  return keep;
}

export function stripSeq(e: Entry): NewEntry {
  const { seq: _seq, ...rest } = e;
  return rest;
}
