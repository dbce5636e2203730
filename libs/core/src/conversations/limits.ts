/**
 * Limits of the conversation ops' arguments, checked the same way by every edge (the
 * protocol's zod schemas call these so the numbers live in one place). Out of range is
 * BAD_REQUEST, never clamped: a client asking for 10 000 conversations has a bug worth seeing.
 */
import { BadRequestError } from '../errors.ts';
import { ID_PATTERN } from '../ids.ts';
import { MENTION_ALL } from './rules.ts';

export const CONVERSATIONS_DEFAULT_LIMIT = 50;
export const CONVERSATIONS_MAX_LIMIT = 500;
export const LAST_MESSAGES_MAX = 50;
export const CONVERSATION_HISTORY_DEFAULT_LIMIT = 200;
export const CONVERSATION_HISTORY_MAX_LIMIT = 1000;
/** Same bound as `read.seqs`: one op may touch as many entries either way. */
export const DELETE_MAX_SEQS = 1000;
export const MENTIONS_MAX = 100;

export interface ConversationsArgs {
  limit?: number;
  beforeLastSeq?: number;
  lastMessages?: number;
}

export interface ConversationsPage {
  limit: number;
  /** Undefined: from the newest conversation. */
  beforeLastSeq: number | undefined;
  lastMessages: number;
}

function isIntIn(n: unknown, min: number, max: number): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;
}

export function checkConversationsArgs(args: ConversationsArgs): ConversationsPage {
  const { limit = CONVERSATIONS_DEFAULT_LIMIT, beforeLastSeq, lastMessages = 0 } = args;
  if (!isIntIn(limit, 1, CONVERSATIONS_MAX_LIMIT)) {
    throw new BadRequestError(`conversations: limit: must be an integer in 1-${CONVERSATIONS_MAX_LIMIT}, got ${String(limit)}`);
  }
  if (beforeLastSeq !== undefined && !isIntIn(beforeLastSeq, 1, Number.MAX_SAFE_INTEGER)) {
    throw new BadRequestError(`conversations: beforeLastSeq: must be a positive integer, got ${String(beforeLastSeq)}`);
  }
  if (!isIntIn(lastMessages, 0, LAST_MESSAGES_MAX)) {
    throw new BadRequestError(`conversations: lastMessages: must be an integer in 0-${LAST_MESSAGES_MAX}, got ${String(lastMessages)}`);
  }
  return { limit, beforeLastSeq, lastMessages };
}

/** `read.upToSeq` and `clear.upToSeq`: a positive seq. */
export function checkUpToSeq(op: string, upToSeq: unknown): number {
  if (!isIntIn(upToSeq, 1, Number.MAX_SAFE_INTEGER)) {
    throw new BadRequestError(`${op}: upToSeq: must be a positive integer, got ${String(upToSeq)}`);
  }
  return upToSeq;
}

/** `delete.seqs`: 1-1000 positive seqs; returned sorted, once each. */
export function checkDeleteSeqs(seqs: readonly unknown[]): number[] {
  if (seqs.length < 1 || seqs.length > DELETE_MAX_SEQS) {
    throw new BadRequestError(`delete: seqs: must hold 1-${DELETE_MAX_SEQS} seqs, got ${seqs.length}`);
  }
  for (const s of seqs) {
    if (!isIntIn(s, 1, Number.MAX_SAFE_INTEGER)) throw new BadRequestError(`delete: seqs: must be positive integers, got ${String(s)}`);
  }
  return [...new Set(seqs as number[])].sort((a, b) => a - b);
}

/**
 * `send.mentions`: ['@all'] alone, or 1-100 user ids; returned once each, in order. Whether the
 * ids are members is the caller's check (it needs the group).
 */
export function checkMentions(mentions: readonly unknown[]): string[] {
  if (mentions.length < 1 || mentions.length > MENTIONS_MAX) {
    throw new BadRequestError(`send: mentions: must hold 1-${MENTIONS_MAX} ids, got ${mentions.length}`);
  }
  const unique = [...new Set(mentions)];
  if (unique.includes(MENTION_ALL) && unique.length > 1) {
    throw new BadRequestError(`send: mentions: "${MENTION_ALL}" must be alone`);
  }
  for (const id of unique) {
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw new BadRequestError(`send: mentions: not a user id: ${String(id)}`);
  }
  return unique as string[];
}
