/**
 * The work queue as the workers see it, with a gate: while held, every job they take waits
 * before its handler, so it stays pending in the job store. Whatever is enqueued meanwhile meets
 * those pending jobs, as it would behind a slow worker; nothing else changes.
 */
import type { WorkQueue } from '@seqline/core';

export interface HeldQueue {
  /** Give this to startWorkers; enqueue through the real queue. */
  readonly queue: WorkQueue;
  hold(): void;
  release(): void;
}

export function heldQueue(real: WorkQueue): HeldQueue {
  let gate: { wait: Promise<void>; open: () => void } | undefined;
  const queue: WorkQueue = {
    enqueue: (input) => real.enqueue(input),
    consume: (input) =>
      real.consume({
        ...input,
        handler: async (payload, ctx) => {
          while (gate) await gate.wait;
          await input.handler(payload, ctx);
        },
      }),
    deadLetters: () => real.deadLetters(),
    replay: (id) => real.replay(id),
    stopConsuming: () => real.stopConsuming(),
    close: () => real.close(),
  };
  return {
    queue,
    hold() {
      if (gate) return;
      let open = () => {};
      const wait = new Promise<void>((resolve) => (open = resolve));
      gate = { wait, open };
    },
    release() {
      const g = gate;
      gate = undefined;
      g?.open();
    },
  };
}
