/**
 * The contract of a GroupStreamAppender that passes appends on to another (a thread's writer in
 * front of its shards' group writer): an append reaches the writer it wraps with everything its
 * caller gave, including a field the decorator does not know (it forwards the input whole).
 */
import { describe, expect, it } from 'vitest';
import { groupKey } from '@seqline/core';
import type { GroupAppend, GroupAppendOutcome, GroupStreamAppender, NewEntry } from '@seqline/core';
import { uniqueTenant } from './harness.ts';

/** The writer under the decorator: records each append's input; every entry is new. */
export class ListeningGroupAppender implements GroupStreamAppender {
  readonly appends: GroupAppend[] = [];
  private head = 0;

  async append(input: GroupAppend): Promise<GroupAppendOutcome[]> {
    this.appends.push(input);
    return input.entries.map(() => ({ seq: ++this.head, duplicate: false, prevSeq: this.head - 1 }));
  }
  async headSeq(): Promise<number> {
    return this.head;
  }
}

export interface GroupAppenderDecoratorRig {
  appender: GroupStreamAppender;
  close(): Promise<void>;
}

export function groupStreamAppenderDecoratorContract(
  name: string,
  decorate: (inner: ListeningGroupAppender) => Promise<GroupAppenderDecoratorRig>,
): void {
  describe(`GroupStreamAppender decorator contract: ${name}`, () => {
    it('forwards an append whole: a field the decorator does not know reaches the writer it wraps', async () => {
      const inner = new ListeningGroupAppender();
      const rig = await decorate(inner);
      try {
        const group = groupKey(uniqueTenant(), 'g');
        const entry: NewEntry = {
          kind: 'msg',
          appinfo: 'm1',
          from: 'bob',
          sendTime: 1_700_000_000_000,
          type: 'text',
          body: { text: 'm1' },
          conv: { type: 'group', id: 'g' },
        };
        // A field a later version of the port may add (a trace id, say): no decorator lists it.
        const input = { group, entries: [entry], traceId: 'trace-7' };
        expect(await rig.appender.append(input)).toHaveLength(1);
        expect(inner.appends).toHaveLength(1);
        expect(inner.appends[0]).toMatchObject(input);
      } finally {
        await rig.close();
      }
    });
  });
}
