/**
 * Runs the work queued during one event-loop turn together, in arrival order, from one
 * setImmediate. The gateway queues the requests it admits synchronously here: uWS calls back
 * once per frame and Node drains the microtasks after each call, so each frame used to flush
 * its own NATS write; served together, the NATS requests of a turn's frames leave in one write
 * (and the worker reads them in one). Measured at 2 000 msg/s: gateway 195-200 → 179-186 µs and
 * NATS 103-109 → 81-88 µs of CPU per message (measured in session 9; the history of docs/benchmarks.md in git).
 */
export class TurnBatch {
  private queue: (() => void)[] = [];

  constructor(private readonly onError: (err: unknown) => void) {}

  add(work: () => void): void {
    this.queue.push(work);
    if (this.queue.length === 1) setImmediate(this.run);
  }

  private readonly run = (): void => {
    const due = this.queue;
    this.queue = [];
    for (const work of due) {
      try {
        work();
      } catch (err) {
        this.onError(err);
      }
    }
  };
}
