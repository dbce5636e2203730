/** Builders for the entries written by write-fanout and group changes. */
import type { Conv, Json, NewEntry } from './entry.ts';
import type { Tier } from './tiers.ts';

export interface MessageCopyInput {
  appinfo: string;
  from: string;
  sendTime: number;
  type: string;
  body: Json;
  /** The conversation from the inbox owner's point of view (see convForRecipient). */
  conv: { type: 'user' | 'group'; id: string };
}

/** One copy of a message; identical in every inbox except `conv` for 1:1. */
export function buildMessageCopy(input: MessageCopyInput): NewEntry {
  return {
    kind: 'msg',
    appinfo: input.appinfo,
    conv: { type: input.conv.type, id: input.conv.id },
    from: input.from,
    sendTime: input.sendTime,
    type: input.type,
    body: input.body,
  };
}

/**
 * The conv of the recipient's copy, given the conv of the sender's copy. 1:1: conv.id is the
 * *other* party, so the recipient's copy names the sender; group: the group id, unchanged.
 */
export function convForRecipient(conv: { type: 'user' | 'group'; id: string }, sender: string): Conv {
  return conv.type === 'user' ? { type: 'user', id: sender } : { type: 'group', id: conv.id };
}

export type GroupEvent = 'create' | 'add' | 'remove' | 'rename' | 'tier';

export interface GroupEventInput {
  group: string;
  actor: string;
  event: GroupEvent;
  members?: string[];
  /** The group's name when the event was made, with its revision (GroupRecord.nameRev): the title of every conversation view. */
  name?: string;
  nameRev?: number;
  tier?: Tier;
  time: number;
  appinfo: string;
}

/** A `group` control entry (type "group.<event>"); the body carries only the given details. */
export function buildGroupEventEntry(input: GroupEventInput): NewEntry {
  // Json has no undefined: absent details are left out rather than written as undefined.
  const body: { [key: string]: Json } = { event: input.event, group: input.group, actor: input.actor };
  if (input.members !== undefined) body['members'] = [...input.members];
  if (input.name !== undefined) body['name'] = input.name;
  if (input.name !== undefined && input.nameRev !== undefined) body['nameRev'] = input.nameRev;
  if (input.tier !== undefined) body['tier'] = input.tier;
  return {
    kind: 'group',
    appinfo: input.appinfo,
    conv: { type: 'group', id: input.group },
    from: input.actor,
    sendTime: input.time,
    type: `group.${input.event}`,
    body,
  };
}
