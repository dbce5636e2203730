import { InFlightQuota, inboxKey, KeyedQueue, RateLimitedError } from '@seqline/core';
import type { Caller, Messaging } from './api.ts';
import type { MessagingContext } from './context.ts';
import type { MessagingDeps } from './deps.ts';
import { changeMembers, createGroup, groupInfo } from './groups.ts';
import { renameGroup } from './group-rename.ts';
import { groupAck, groupHistory, groupReaders } from './group-stream-ops.ts';
import { createShedder, InFlightCounter, processLoopLagMs } from './load.ts';
import { clearConversation, conversationHistory, conversations, deleteForMe, readConversation } from './conversation-ops.ts';
import { edit } from './edit-op.ts';
import { send } from './send.ts';
import { history, read, recall, sync } from './timeline-ops.ts';

/** The application service behind every gateway op; stateless over its ports. */
export function createMessaging(deps: MessagingDeps): Messaging {
  const inFlight = new InFlightCounter();
  const d: MessagingContext = {
    ...deps,
    inFlight,
    shedder: createShedder(inFlight, deps.policy.loopLagMs ?? processLoopLagMs, deps.policy.sheddingPolicy),
    membershipLocks: new KeyedQueue(),
  };
  const quota = new InFlightQuota();
  /** Per-user and per-tenant in-flight caps (I6), read live from the operator's limits. */
  const guarded = <T>(c: Caller, work: () => Promise<T>): Promise<T> => {
    const slot = quota.tryAcquire(c.tenant, c.user, d.policy.limits());
    if (!slot.ok) {
      return Promise.reject(
        new RateLimitedError(
          slot.refused === 'user'
            ? 'too many of your requests in flight; retry shortly'
            : 'too many requests of your tenant in flight; retry shortly',
        ),
      );
    }
    return work().finally(slot.release);
  };
  return {
    send: (c, input) => guarded(c, () => send(d, c, input)),
    sync: (c, maxSeq, limit) => guarded(c, () => sync(d, c, maxSeq, limit)),
    history: (c, beforeSeq, limit) => guarded(c, () => history(d, c, beforeSeq, limit)),
    read: (c, seqs) => guarded(c, () => read(d, c, seqs)),
    recall: (c, appinfo, sender) => guarded(c, () => recall(d, c, appinfo, sender)),
    conversations: (c, input) => guarded(c, () => conversations(d, c, input)),
    conversationHistory: (c, conv, beforeSeq, limit) => guarded(c, () => conversationHistory(d, c, conv, beforeSeq, limit)),
    readConversation: (c, conv, upToSeq) => guarded(c, () => readConversation(d, c, conv, upToSeq)),
    deleteForMe: (c, seqs) => guarded(c, () => deleteForMe(d, c, seqs)),
    clear: (c, conv, upToSeq) => guarded(c, () => clearConversation(d, c, conv, upToSeq)),
    edit: (c, input) => guarded(c, () => edit(d, c, input)),
    createGroup: (c, input) => guarded(c, () => createGroup(d, c, input)),
    addMembers: (c, id, members) => guarded(c, () => changeMembers(d, c, id, members, 'add')),
    removeMembers: (c, id, members) => guarded(c, () => changeMembers(d, c, id, members, 'remove')),
    renameGroup: (c, input) => guarded(c, () => renameGroup(d, c, input)),
    groupInfo: (c, id) => guarded(c, () => groupInfo(d, c, id)),
    groupHistory: (c, input) => guarded(c, () => groupHistory(d, c, input)),
    groupAck: (c, id, gseq) => guarded(c, () => groupAck(d, c, id, gseq)),
    groupReaders: (c, input) => guarded(c, () => groupReaders(d, c, input)),
    subscribe: (c, onPush) => d.push.subscribe({ inbox: inboxKey(c.tenant, c.user), onPush }),
  };
}
