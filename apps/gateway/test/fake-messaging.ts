/** Test double of the Messaging port: records calls, returns canned results, fails or blocks on demand. */
import type { Conv, Entry, PushMessage } from '@seqline/core';
import type { Caller, Messaging } from '@seqline/messaging';

export interface RecordedCall {
  method: keyof Messaging;
  caller: Caller;
  args: unknown[];
}

export const sampleEntry: Entry = {
  seq: 42,
  kind: 'msg',
  appinfo: '0192-x',
  conv: { type: 'user', id: 'bob' },
  from: 'alice',
  sendTime: 1_763_700_000_000,
  type: 'text',
  body: { text: 'hi' },
};

type Method = Exclude<keyof Messaging, 'subscribe'>;

export class FakeMessaging implements Messaging {
  readonly calls: RecordedCall[] = [];
  private readonly failures = new Map<Method, unknown>();
  private readonly gates = new Map<Method, Promise<void>>();
  private readonly subscribers = new Map<string, Set<(msg: PushMessage) => void>>();

  /** Every later call of `method` throws `err`. */
  failWith(method: Method, err: unknown): void {
    this.failures.set(method, err);
  }

  /** Calls of `method` wait until the returned function is called. */
  block(method: Method): () => void {
    let open!: () => void;
    this.gates.set(
      method,
      new Promise<void>((resolve) => {
        open = resolve;
      }),
    );
    return () => {
      this.gates.delete(method);
      open();
    };
  }

  subscriberCount(caller?: Caller): number {
    if (caller) return this.subscribers.get(key(caller))?.size ?? 0;
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /** Delivers a push to every socket subscribed for `caller`. */
  push(caller: Caller, prevSeq: number, entries: Entry[]): void {
    const inbox = key(caller) as PushMessage['inbox'];
    for (const onPush of [...(this.subscribers.get(key(caller)) ?? [])]) onPush({ inbox, prevSeq, entries });
  }

  callsOf(method: keyof Messaging): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  private async record<T>(method: Method, caller: Caller, args: unknown[], result: T): Promise<T> {
    this.calls.push({ method, caller, args });
    await this.gates.get(method);
    if (this.failures.has(method)) throw this.failures.get(method);
    return result;
  }

  send(caller: Caller, input: Parameters<Messaging['send']>[1]) {
    return this.record('send', caller, [input], { seq: 7, sendTime: 1_763_700_000_000, duplicate: false });
  }
  sync(caller: Caller, maxSeq: number, limit: number) {
    const leaky = { ...sampleEntry, internalKey: 't1:alice' } as Entry;
    return this.record('sync', caller, [maxSeq, limit], {
      entries: [leaky],
      headSeq: 42,
      hasMore: false,
      groups: [{ id: 'big', headGseq: 9, cursor: 3 }],
      convs: [],
    });
  }
  history(caller: Caller, beforeSeq: number, limit: number) {
    return this.record('history', caller, [beforeSeq, limit], { entries: [sampleEntry], hasMore: true });
  }
  read(caller: Caller, seqs: number[]) {
    return this.record('read', caller, [seqs], { seq: 43 });
  }
  recall(caller: Caller, appinfo: string) {
    return this.record('recall', caller, [appinfo], { seq: 44 });
  }
  conversations(caller: Caller, input: Parameters<Messaging['conversations']>[1]) {
    return this.record('conversations', caller, [input], { convs: [], headSeq: 42, hasMore: false });
  }
  conversationHistory(caller: Caller, conv: Conv, beforeSeq: number, limit: number) {
    return this.record('conversationHistory', caller, [conv, beforeSeq, limit], { entries: [sampleEntry], hasMore: false });
  }
  readConversation(caller: Caller, conv: Conv, upToSeq: number) {
    return this.record('readConversation', caller, [conv, upToSeq], { seq: 45 });
  }
  deleteForMe(caller: Caller, seqs: number[]) {
    return this.record('deleteForMe', caller, [seqs], { seq: 46 });
  }
  clear(caller: Caller, conv: Conv, upToSeq?: number) {
    return this.record('clear', caller, [conv, upToSeq], { seq: 47 });
  }
  edit(caller: Caller, input: Parameters<Messaging['edit']>[1]) {
    return this.record('edit', caller, [input], { seq: 48 });
  }
  createGroup(caller: Caller, input: { name: string; members: string[]; id?: string }) {
    return this.record('createGroup', caller, [input], { id: input.id ?? 'g-new', tier: 'small' as const });
  }
  addMembers(caller: Caller, id: string, members: string[]) {
    return this.record('addMembers', caller, [id, members], { tier: 'small' as const, memberCount: 3 });
  }
  removeMembers(caller: Caller, id: string, members: string[]) {
    return this.record('removeMembers', caller, [id, members], { tier: 'small' as const, memberCount: 1 });
  }
  renameGroup(caller: Caller, input: { id: string; name: string }) {
    return this.record('renameGroup', caller, [input], { id: input.id, name: input.name });
  }
  groupInfo(caller: Caller, id: string) {
    return this.record('groupInfo', caller, [id], {
      id,
      name: 'team',
      tier: 'huge' as const,
      memberCount: 5000,
      fanout: 'read' as const,
      headGseq: 12,
    });
  }
  groupHistory(caller: Caller, input: Parameters<Messaging['groupHistory']>[1]) {
    return this.record('groupHistory', caller, [input], {
      messages: [{ ...sampleEntry, conv: { type: 'group' as const, id: 'big' }, gseq: 12 }],
      hasMore: false,
    });
  }
  groupAck(caller: Caller, id: string, gseq: number) {
    return this.record('groupAck', caller, [id, gseq], { cursor: gseq });
  }
  groupReaders(caller: Caller, input: Parameters<Messaging['groupReaders']>[1]) {
    return this.record('groupReaders', caller, [input], {
      gseq: input.gseq,
      readCount: 1,
      unreadCount: 0,
      readers: ['bob'],
      hasMore: false,
    });
  }

  subscribe(caller: Caller, onPush: (msg: PushMessage) => void): () => void {
    const set = this.subscribers.get(key(caller)) ?? new Set();
    set.add(onPush);
    this.subscribers.set(key(caller), set);
    return () => {
      set.delete(onPush);
    };
  }
}

function key(caller: Caller): string {
  return `${caller.tenant}:${caller.user}`;
}
