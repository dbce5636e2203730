/**
 * The contract of an InboxWriter that passes calls on to another (a thread's writer in front of
 * its shards' owner, a test's wrapper): every call reaches the writer it wraps with everything
 * its caller gave, including a field the decorator does not know (it forwards the input whole).
 * A decorator that rebuilds an input from the fields it lists fails here.
 */
import { describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import type {
  AppendOutcome,
  ChainedAppend,
  ConversationRebuildReport,
  InboxAppendThen,
  InboxKey,
  InboxReceipt,
  InboxWriter,
  NewEntry,
  OwnerAppend,
} from '@seqline/core';
import { uniqueTenant } from './harness.ts';

/** The writer under the decorator: records each call's input; every entry is new. */
export class ListeningInboxWriter implements InboxWriter {
  readonly appends: OwnerAppend[] = [];
  readonly chained: InboxAppendThen[] = [];
  readonly receipts: InboxReceipt[] = [];
  private head = 0;

  async append(input: OwnerAppend): Promise<AppendOutcome[]> {
    this.appends.push(input);
    const outcomes = input.entries.map(() => ({ seq: ++this.head, duplicate: false }));
    input.durable?.(outcomes);
    return outcomes;
  }
  async appendThen(input: InboxAppendThen): Promise<ChainedAppend> {
    this.chained.push(input);
    const outcomes = await this.append({ inbox: input.inbox, entries: input.entries });
    await this.append({ inbox: input.next.inbox, entries: input.next.entries });
    return { outcomes, next: 'appended' };
  }
  async addReceipt(input: InboxReceipt): Promise<void> {
    this.receipts.push(input);
  }
  async headSeq(): Promise<number> {
    return this.head;
  }
  rebuildConversations(): Promise<ConversationRebuildReport> {
    return Promise.reject(new Error('no conversation index in this double'));
  }
  async close(): Promise<void> {}
}

export interface InboxWriterDecoratorRig {
  writer: InboxWriter;
  close(): Promise<void>;
}

function entry(appinfo: string): NewEntry {
  return {
    kind: 'msg',
    appinfo,
    from: 'bob',
    sendTime: 1_700_000_000_000,
    type: 'text',
    body: { text: appinfo },
    conv: { type: 'user', id: 'bob' },
  };
}

export function inboxWriterDecoratorContract(
  name: string,
  decorate: (inner: ListeningInboxWriter) => Promise<InboxWriterDecoratorRig>,
): void {
  describe(`InboxWriter decorator contract: ${name}`, () => {
    const fresh = (): { a: InboxKey; b: InboxKey } => {
      const tenant = uniqueTenant();
      return { a: inboxKey(tenant, 'alice'), b: inboxKey(tenant, 'bob') };
    };
    // A field a later version of the port may add (a trace id, say): no decorator lists it.
    const traceId = 'trace-7';

    it('forwards an append whole: a field the decorator does not know reaches the writer it wraps', async () => {
      const inner = new ListeningInboxWriter();
      const rig = await decorate(inner);
      try {
        const { a } = fresh();
        const input = { inbox: a, entries: [entry('m1')], traceId };
        expect(await rig.writer.append(input)).toHaveLength(1);
        expect(inner.appends).toHaveLength(1);
        expect(inner.appends[0]).toMatchObject(input);
      } finally {
        await rig.close();
      }
    });

    it("forwards appendThen's first append whole, and its follow-up", async () => {
      const inner = new ListeningInboxWriter();
      const rig = await decorate(inner);
      try {
        const { a, b } = fresh();
        const next = { inbox: b, entries: [entry('m1')], timeoutMs: 5000 };
        const input = { inbox: a, entries: [entry('m1')], next, traceId };
        const chained = await rig.writer.appendThen(input);
        expect(chained.next).toBe('appended');
        // Passed on as an appendThen, or as the append it starts with: either way, whole.
        const first = inner.chained[0] ?? inner.appends.find((input) => input.inbox === a);
        expect(first).toMatchObject({ inbox: a, traceId });
        expect(inner.appends.map((input) => input.inbox)).toContain(b);
      } finally {
        await rig.close();
      }
    });

    it('forwards a receipt whole', async () => {
      const inner = new ListeningInboxWriter();
      const rig = await decorate(inner);
      try {
        const { a } = fresh();
        const input = { inbox: a, appinfo: 'm1', readers: ['bob'], traceId };
        await rig.writer.addReceipt(input);
        expect(inner.receipts).toHaveLength(1);
        expect(inner.receipts[0]).toMatchObject(input);
      } finally {
        await rig.close();
      }
    });
  });
}
