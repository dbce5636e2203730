/**
 * A tiny typed event emitter (no node:events, so the SDK also bundles for browsers).
 * `emitSerial` awaits each listener in turn: entry handlers may persist before max seq moves.
 */
export type Listener<A> = (arg: A) => void | Promise<void>;

export class TypedEmitter<Events extends Record<string, unknown>> {
  private readonly listeners: { [K in keyof Events]?: Listener<Events[K]>[] } = {};

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    (this.listeners[event] ??= []).push(listener);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    const list = this.listeners[event];
    if (list) this.listeners[event] = list.filter((l) => l !== listener);
  }

  /** Calls listeners in order, awaiting each; collects failures instead of stopping. */
  async emitSerial<K extends keyof Events>(event: K, arg: Events[K]): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (const l of [...(this.listeners[event] ?? [])]) {
      try {
        await l(arg);
      } catch (err) {
        failures.push(err);
      }
    }
    return failures;
  }
}
