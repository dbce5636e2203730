/**
 * Where the client keeps its max seq: the one number it syncs from. `save` is called only with
 * increasing values, after the entries up to that seq were handed to the app.
 */
export interface MaxSeqStore {
  load(): Promise<number>;
  save(seq: number): Promise<void>;
}

/** Process-lifetime store: a restart syncs the whole inbox again. */
export class MemoryMaxSeqStore implements MaxSeqStore {
  constructor(private seq = 0) {}

  async load(): Promise<number> {
    return this.seq;
  }

  async save(seq: number): Promise<void> {
    this.seq = seq;
  }
}
