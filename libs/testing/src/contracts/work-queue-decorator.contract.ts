/**
 * The contract of a WorkQueue that passes calls on to another (a gate in front of the real
 * queue): every call reaches the queue it wraps with everything its caller gave, including a
 * field the decorator does not know (it forwards the input whole, `{ ...input, handler }`), and
 * a handler it wraps still runs the caller's.
 */
import { describe, expect, it } from 'vitest';
import type { JobContext, JobEnqueue, Json, QueueConsume, StoredJob, WorkQueue } from '@seqline/core';

/** The queue under the decorator: records each call's input; runs nothing by itself. */
export class ListeningWorkQueue implements WorkQueue {
  readonly enqueued: JobEnqueue[] = [];
  readonly consumers: QueueConsume[] = [];

  async enqueue(input: JobEnqueue): Promise<void> {
    this.enqueued.push(input);
  }
  async consume(input: QueueConsume): Promise<void> {
    this.consumers.push(input);
  }
  async deadLetters(): Promise<StoredJob[]> {
    return [];
  }
  async replay(): Promise<boolean> {
    return false;
  }
  async stopConsuming(): Promise<void> {}
  async close(): Promise<void> {}
}

export function workQueueDecoratorContract(name: string, decorate: (inner: ListeningWorkQueue) => WorkQueue): void {
  describe(`WorkQueue decorator contract: ${name}`, () => {
    // A field a later version of the port may add (a trace id, say): no decorator lists it.
    const traceId = 'trace-7';

    it('forwards an enqueue whole: a field the decorator does not know reaches the queue it wraps', async () => {
      const inner = new ListeningWorkQueue();
      const input = { queue: 'q', id: 'q-1', payload: { n: 1 }, traceId };
      await decorate(inner).enqueue(input);
      expect(inner.enqueued).toEqual([input]);
    });

    it("forwards a consume whole, and the handler it passes on runs the caller's", async () => {
      const inner = new ListeningWorkQueue();
      const ran: Array<[Json, JobContext]> = [];
      const options = { concurrency: 3, perKeyConcurrency: 1 };
      const input = { queue: 'q', handler: async (payload: Json, ctx: JobContext) => void ran.push([payload, ctx]), options, traceId };
      await decorate(inner).consume(input);
      expect(inner.consumers).toHaveLength(1);
      const got = inner.consumers[0];
      expect(got).toMatchObject({ queue: 'q', options, traceId });
      await got?.handler('p', { id: 'q-1', attempt: 1 });
      expect(ran).toEqual([['p', { id: 'q-1', attempt: 1 }]]);
    });
  });
}
