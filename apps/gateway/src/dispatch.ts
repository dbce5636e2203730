/** One decoded request → one Messaging call → the op's documented result fields (docs/protocol.md "Ops"). */
import { BadRequestError } from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';
import { toWireConv, toWireEntry, toWireGroupMessage, type ClientRequest } from '@seqline/protocol';

/**
 * Results are rebuilt field by field rather than spread: whatever else a Messaging
 * implementation returns stays on the server. Group ids go out as `group` (see docs/protocol.md).
 */
export async function dispatch(messaging: Messaging, caller: Caller, request: ClientRequest): Promise<object> {
  switch (request.op) {
    case 'send': {
      const r = await messaging.send(caller, request.args);
      // `body` only when the stored body differs from the one sent (a before-send rewrite).
      return r.body === undefined
        ? { seq: r.seq, sendTime: r.sendTime, duplicate: r.duplicate }
        : { seq: r.seq, sendTime: r.sendTime, duplicate: r.duplicate, body: r.body };
    }
    case 'sync': {
      const r = await messaging.sync(caller, request.args.maxSeq, request.args.limit);
      return {
        entries: r.entries.map(toWireEntry),
        headSeq: r.headSeq,
        hasMore: r.hasMore,
        groups: r.groups.map((g) => ({ id: g.id, headGseq: g.headGseq, cursor: g.cursor })),
        convs: r.convs.map((c) => toWireConv(c)),
        ...(r.convsPending !== undefined && { convsPending: r.convsPending.map((c) => ({ type: c.type, id: c.id })) }),
      };
    }
    case 'history': {
      const { conv, beforeSeq, limit } = request.args;
      const r =
        conv === undefined
          ? await messaging.history(caller, beforeSeq, limit)
          : await messaging.conversationHistory(caller, conv, beforeSeq, limit);
      return { entries: r.entries.map(toWireEntry), hasMore: r.hasMore };
    }
    case 'read': {
      const target = request.args;
      const r =
        'seqs' in target
          ? await messaging.read(caller, target.seqs)
          : await messaging.readConversation(caller, target.conv, target.upToSeq);
      return { seq: r.seq };
    }
    case 'conversations': {
      const { limit, beforeLastSeq, lastMessages } = request.args;
      const r = await messaging.conversations(caller, {
        limit,
        lastMessages,
        ...(beforeLastSeq !== undefined ? { beforeLastSeq } : {}),
      });
      return { convs: r.convs.map((c) => toWireConv(c.state, c.messages)), headSeq: r.headSeq, hasMore: r.hasMore };
    }
    case 'delete': {
      const r = await messaging.deleteForMe(caller, request.args.seqs);
      return { seq: r.seq };
    }
    case 'clear': {
      const r = await messaging.clear(caller, request.args.conv, request.args.upToSeq);
      return { seq: r.seq };
    }
    case 'edit': {
      const { appinfo, body, type, editId } = request.args;
      const r = await messaging.edit(caller, {
        appinfo,
        body,
        ...(type !== undefined ? { type } : {}),
        ...(editId !== undefined ? { editId } : {}),
      });
      return { seq: r.seq };
    }
    case 'recall': {
      const r = await messaging.recall(caller, request.args.appinfo, request.args.from);
      return { seq: r.seq };
    }
    case 'group.create': {
      const { name, members, group } = request.args;
      const r = await messaging.createGroup(caller, group === undefined ? { name, members } : { name, members, id: group });
      return { group: r.id, tier: r.tier };
    }
    case 'group.add': {
      const r = await messaging.addMembers(caller, request.args.group, request.args.members);
      return { tier: r.tier, memberCount: r.memberCount };
    }
    case 'group.remove': {
      const r = await messaging.removeMembers(caller, request.args.group, request.args.members);
      return { tier: r.tier, memberCount: r.memberCount };
    }
    case 'group.rename': {
      const r = await messaging.renameGroup(caller, { id: request.args.group, name: request.args.name });
      return { group: r.id, name: r.name };
    }
    case 'group.info': {
      const r = await messaging.groupInfo(caller, request.args.group);
      return { group: r.id, name: r.name, tier: r.tier, memberCount: r.memberCount, fanout: r.fanout, headGseq: r.headGseq };
    }
    case 'group.history': {
      const { group, afterGseq, beforeGseq, limit } = request.args;
      const r = await messaging.groupHistory(caller, {
        id: group,
        limit,
        ...(afterGseq !== undefined ? { afterGseq } : {}),
        ...(beforeGseq !== undefined ? { beforeGseq } : {}),
      });
      return { messages: r.messages.map(toWireGroupMessage), hasMore: r.hasMore };
    }
    case 'group.ack': {
      const r = await messaging.groupAck(caller, request.args.group, request.args.gseq);
      return { cursor: r.cursor };
    }
    case 'group.readers': {
      const { group, gseq, after, limit } = request.args;
      const r = await messaging.groupReaders(caller, { id: group, gseq, limit, ...(after !== undefined ? { after } : {}) });
      return { gseq: r.gseq, readCount: r.readCount, unreadCount: r.unreadCount, readers: r.readers, hasMore: r.hasMore };
    }
    case 'auth':
      // A connection concern: ClientSession serves it; HTTP has no connection to renew.
      throw new BadRequestError("auth: renews a WebSocket's token; HTTP calls carry their own");
    default:
      return unreachable(request);
  }
}

function unreachable(request: never): never {
  throw new Error(`unhandled op ${(request as { op: string }).op}`);
}
