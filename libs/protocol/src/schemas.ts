/**
 * Zod schemas of every op's arguments (docs/protocol.md "Ops"). Arguments sit at the top level of
 * a frame next to `id` and `op`; unknown keys are ignored so clients may send newer fields.
 *
 * The group ops' `id` argument would collide with the frame's own `id` (the client's request
 * number), so on the wire the group is named `group` (alias `groupId`) — docs/protocol.md.
 */
import { z } from 'zod';
import {
  checkMentions,
  CLIENT_APPINFO_PATTERN,
  CONVERSATIONS_DEFAULT_LIMIT,
  CONVERSATIONS_MAX_LIMIT,
  DELETE_MAX_SEQS,
  ID_PATTERN,
  LAST_MESSAGES_MAX,
  SeqlineError,
  type Json,
} from '@seqline/core';
import {
  DEFAULT_PAGE_LIMIT,
  MAX_APPINFO_LENGTH,
  MAX_GROUP_NAME_LENGTH,
  MAX_MEMBERS_PER_FRAME,
  MAX_PAGE_LIMIT,
  MAX_READ_SEQS,
  MAX_TYPE_LENGTH,
} from './limits.ts';

/** A tenant-local user or group id: never contains ':' (the tenant separator). */
export const idSchema = z.string().regex(ID_PATTERN, 'must be 1-64 characters of A-Z a-z 0-9 _ . @ -');

/** A client appinfo: never contains ':', which every server-made entry id has (see core's appinfo.ts). */
export const appinfoSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_APPINFO_LENGTH, `must be at most ${MAX_APPINFO_LENGTH} characters`)
  .regex(CLIENT_APPINFO_PATTERN, "must not contain ':', control characters or unpaired surrogates");

/** A seq / gseq position: a non-negative safe integer (0 = before the first entry). */
export const seqSchema = z.int().min(0);

/** Page size: default 200; values above 1000 are clamped (hasMore tells the client to page on). */
export const limitSchema = z
  .int()
  .min(1)
  .transform((n) => Math.min(n, MAX_PAGE_LIMIT))
  .default(DEFAULT_PAGE_LIMIT);

export type Recipient = { user: string } | { group: string };

export const recipientSchema = z
  .strictObject({ user: idSchema.optional(), group: idSchema.optional() })
  .refine((to) => (to.user === undefined) !== (to.group === undefined), 'must be {"user": id} or {"group": id}')
  .transform((to): Recipient => (to.user !== undefined ? { user: to.user } : { group: to.group ?? '' }));

/** Any JSON value (the frame was JSON-parsed); size and depth are checked after parsing. */
const bodySchema = z.custom<Json>((v) => v !== undefined, { error: 'is required' });

const membersSchema = z.array(idSchema).max(MAX_MEMBERS_PER_FRAME);

/** A conversation as the caller sees it (1:1: the other party; group: the group id). */
export const convSchema = z.strictObject({ type: z.enum(['user', 'group']), id: idSchema });

/** A positive seq of the caller's inbox (upToSeq, delete seqs). */
const positiveSeqSchema = z.int().min(1);

/** `send.mentions`: ['@all'] alone or 1-100 user ids; core's checkMentions states the rule once. */
const mentionsSchema = z.array(z.unknown()).transform((mentions, ctx) => {
  try {
    return checkMentions(mentions);
  } catch (err) {
    if (!(err instanceof SeqlineError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message.replace(/^send: mentions: /, '') });
    return z.NEVER;
  }
});

const typeSchema = z.string().min(1, 'must not be empty').max(MAX_TYPE_LENGTH);

export const sendArgsSchema = z.object({
  appinfo: appinfoSchema,
  to: recipientSchema,
  type: typeSchema,
  body: bodySchema,
  mentions: mentionsSchema.optional(),
});

export const syncArgsSchema = z.object({ maxSeq: seqSchema, limit: limitSchema });

/**
 * beforeSeq defaults to "after the newest": a client without a position gets the latest page.
 * With `conv`, only that conversation's visible entries.
 */
export const historyArgsSchema = z.object({
  beforeSeq: seqSchema.default(Number.MAX_SAFE_INTEGER),
  limit: limitSchema,
  conv: convSchema.optional(),
});

type WireConv = z.output<typeof convSchema>;
export type ReadTarget = { seqs: number[] } | { conv: WireConv; upToSeq: number };

/** `{seqs}` or `{conv, upToSeq}`: exactly one of the two forms. */
export const readArgsSchema = z
  .object({
    seqs: z.array(positiveSeqSchema).min(1, 'must name at least one seq').max(MAX_READ_SEQS).optional(),
    conv: convSchema.optional(),
    upToSeq: positiveSeqSchema.optional(),
  })
  .superRefine(({ seqs, conv, upToSeq }, ctx) => {
    const v11 = conv !== undefined || upToSeq !== undefined;
    const problem: [string, string] | null =
      seqs === undefined && !v11
        ? ['seqs', 'is required (or conv and upToSeq)']
        : seqs !== undefined && v11
          ? ['seqs', 'give seqs, or conv and upToSeq, not both']
          : v11 && conv === undefined
            ? ['conv', 'is required with upToSeq']
            : v11 && upToSeq === undefined
              ? ['upToSeq', 'is required with conv']
              : null;
    if (problem !== null) ctx.addIssue({ code: 'custom', path: [problem[0]], message: problem[1] });
  })
  .transform((a): ReadTarget => {
    if (a.seqs !== undefined) return { seqs: a.seqs };
    if (a.conv === undefined || a.upToSeq === undefined) throw new Error('read: refined above');
    return { conv: a.conv, upToSeq: a.upToSeq };
  });

/** The conversation list, newest activity first; limits out of range are refused, not clamped. */
export const conversationsArgsSchema = z.object({
  limit: z.int().min(1).max(CONVERSATIONS_MAX_LIMIT).default(CONVERSATIONS_DEFAULT_LIMIT),
  beforeLastSeq: positiveSeqSchema.optional(),
  lastMessages: z.int().min(0).max(LAST_MESSAGES_MAX).default(0),
});

/** Delete for me: entries of the caller's inbox. */
export const deleteArgsSchema = z.object({
  seqs: z.array(positiveSeqSchema).min(1, 'must name at least one seq').max(DELETE_MAX_SEQS),
});

/** Clear history for me: upToSeq defaults to the conversation's last seq. */
export const clearArgsSchema = z.object({ conv: convSchema, upToSeq: positiveSeqSchema.optional() });

/**
 * Recall names a stored message, which may predate the client-appinfo pattern: any appinfo is
 * looked up, and core's recall rule accepts only a `msg` (never a server entry). An appinfo is
 * unique per sender only: `from` names the message's sender (default: the caller; a group admin
 * recalling a member's message names the member).
 */
export const recallArgsSchema = z.object({
  appinfo: z.string().min(1, 'must not be empty').max(MAX_APPINFO_LENGTH, `must be at most ${MAX_APPINFO_LENGTH} characters`),
  from: idSchema.optional(),
});

/** New content for the caller's own message `appinfo` (looked up as given, like recall). */
export const editArgsSchema = z.object({
  appinfo: recallArgsSchema.shape.appinfo,
  body: bodySchema,
  type: typeSchema.optional(),
  /** The client's id for this edit, validated like a client appinfo: a retry with it is the same edit. */
  editId: appinfoSchema.optional(),
});

/** A group's name: group.create and group.rename share it. */
export const groupNameSchema = z.string().min(1, 'must not be empty').max(MAX_GROUP_NAME_LENGTH);

export const groupCreateArgsSchema = z.object({
  name: groupNameSchema,
  members: membersSchema,
  /** Chosen group id; the server generates one when absent. */
  group: idSchema.optional(),
});

export const groupMembersArgsSchema = z.object({
  group: idSchema,
  members: membersSchema.min(1, 'must name at least one member'),
});

export const groupInfoArgsSchema = z.object({ group: idSchema });

export const groupRenameArgsSchema = z.object({ group: idSchema, name: groupNameSchema });

export const groupHistoryArgsSchema = z
  .object({
    group: idSchema,
    afterGseq: seqSchema.optional(),
    beforeGseq: seqSchema.optional(),
    limit: limitSchema,
  })
  .refine((a) => a.afterGseq === undefined || a.beforeGseq === undefined, {
    message: 'give afterGseq or beforeGseq, not both',
    path: ['beforeGseq'],
  });

export const groupAckArgsSchema = z.object({ group: idSchema, gseq: seqSchema });

/** Extension (docs/protocol.md): who read read-fanout message `gseq`; readers paged by id. */
export const groupReadersArgsSchema = z.object({
  group: idSchema,
  gseq: z.int().min(1),
  after: idSchema.optional(),
  limit: z
    .int()
    .min(1)
    .transform((n) => Math.min(n, MAX_PAGE_LIMIT))
    .default(MAX_PAGE_LIMIT),
});

/**
 * Extension (docs/protocol.md): renews an open socket's token before it expires; the token must
 * be for the socket's user and tenant. Checked by the token verifier, not here (a malformed
 * token is UNAUTHORIZED like a forged one).
 */
export const authArgsSchema = z.object({ token: z.string() });

/** op name → schema of its arguments. */
export const opArgsSchemas = {
  send: sendArgsSchema,
  sync: syncArgsSchema,
  history: historyArgsSchema,
  read: readArgsSchema,
  recall: recallArgsSchema,
  'group.create': groupCreateArgsSchema,
  'group.add': groupMembersArgsSchema,
  'group.remove': groupMembersArgsSchema,
  'group.rename': groupRenameArgsSchema,
  'group.info': groupInfoArgsSchema,
  'group.history': groupHistoryArgsSchema,
  'group.ack': groupAckArgsSchema,
  'group.readers': groupReadersArgsSchema,
  auth: authArgsSchema,
  conversations: conversationsArgsSchema,
  delete: deleteArgsSchema,
  clear: clearArgsSchema,
  edit: editArgsSchema,
} as const;

export type Op = keyof typeof opArgsSchemas;
export const OPS = Object.keys(opArgsSchemas) as Op[];

export type OpArgs<O extends Op> = z.output<(typeof opArgsSchemas)[O]>;
export type SendArgs = OpArgs<'send'>;
export type SyncArgs = OpArgs<'sync'>;
export type HistoryArgs = OpArgs<'history'>;
export type ReadArgs = OpArgs<'read'>;
export type RecallArgs = OpArgs<'recall'>;
export type GroupCreateArgs = OpArgs<'group.create'>;
export type GroupMembersArgs = OpArgs<'group.add'>;
export type GroupRenameArgs = OpArgs<'group.rename'>;
export type GroupInfoArgs = OpArgs<'group.info'>;
export type GroupHistoryArgs = OpArgs<'group.history'>;
export type GroupAckArgs = OpArgs<'group.ack'>;
export type GroupReadersArgs = OpArgs<'group.readers'>;
export type AuthArgs = OpArgs<'auth'>;
export type ConversationsArgs = OpArgs<'conversations'>;
export type DeleteArgs = OpArgs<'delete'>;
export type ClearArgs = OpArgs<'clear'>;
export type EditArgs = OpArgs<'edit'>;

/** A decoded client frame: discriminated on `op`, with typed arguments. */
export type ClientRequest = { [O in Op]: { id: number; op: O; args: OpArgs<O> } }[Op];

/** Ops whose arguments name a group (and accept `groupId` as an alias of `group`). */
export function isGroupOp(op: Op): boolean {
  return op.startsWith('group.');
}

export function isOp(value: unknown): value is Op {
  return typeof value === 'string' && Object.hasOwn(opArgsSchemas, value);
}
