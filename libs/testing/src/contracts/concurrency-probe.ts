/** What the WorkQueue contract measures its concurrency bounds with. */
import type { Json } from '@seqline/core';

/** Tracks how many handlers run at once, overall and per key. */
export class ConcurrencyProbe {
  running = 0;
  maxRunning = 0;
  private readonly perKey = new Map<string, number>();
  readonly maxPerKey = new Map<string, number>();

  async around(key: string, body: () => Promise<void>): Promise<void> {
    const n = (this.perKey.get(key) ?? 0) + 1;
    this.perKey.set(key, n);
    this.maxPerKey.set(key, Math.max(this.maxPerKey.get(key) ?? 0, n));
    this.maxRunning = Math.max(this.maxRunning, ++this.running);
    try {
      await body();
    } finally {
      this.running--;
      this.perKey.set(key, (this.perKey.get(key) ?? 1) - 1);
    }
  }
}

/** The `group` field of an object payload: the key the per-key bound applies to. */
export const keyOfGroup = (payload: Json): string | undefined =>
  payload !== null && typeof payload === 'object' && !Array.isArray(payload) && typeof payload.group === 'string'
    ? payload.group
    : undefined;
