/**
 * Best-effort announcements about shard ownership on core NATS, next to the shard subjects:
 *
 * - `<subjectPrefix>.released` — a host gave a shard back (after its release was recorded and
 *   its lease key deleted). Every other host runs a balancing round at once instead of at its
 *   next tick, so a clean handover takes milliseconds, not up to ttl/3 of noticing.
 * - `<subjectPrefix>.serving` — a host now serves a shard. A caller backing off between retries
 *   of a request to that shard retries at once instead of sleeping out its backoff.
 *
 * Nothing relies on them for safety: a lost notice costs the time until the next round or retry,
 * a forged one a round or a retry. Payload `{"owner": <owner id>, "shard": <n>}`.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '@seqline/core';

export type ShardNotice = 'released' | 'serving';

export interface NoticeBody {
  owner: string;
  shard: number;
}

export function noticeSubject(subjectPrefix: string, notice: ShardNotice): string {
  return `${subjectPrefix}.${notice}`;
}

export function announce(nc: NatsConnection, subjectPrefix: string, notice: ShardNotice, body: NoticeBody, logger: Logger): void {
  try {
    nc.publish(noticeSubject(subjectPrefix, notice), JSON.stringify(body));
  } catch (err) {
    logger.warn({ shard: body.shard, notice, err: err instanceof Error ? err.message : String(err) }, 'could not announce a shard change');
  }
}

/** Subscribes to one kind of notice; `onNotice` gets each well-formed one. */
export function listen(nc: NatsConnection, subjectPrefix: string, notice: ShardNotice, onNotice: (body: NoticeBody) => void): Subscription {
  return nc.subscribe(noticeSubject(subjectPrefix, notice), {
    callback: (err, msg) => {
      if (err) return;
      const body = parseNotice(msg.data);
      if (body) onNotice(body);
    },
  });
}

function parseNotice(data: Uint8Array): NoticeBody | undefined {
  try {
    const raw: unknown = JSON.parse(new TextDecoder().decode(data));
    if (typeof raw !== 'object' || raw === null) return undefined;
    const { owner, shard } = raw as Record<string, unknown>;
    return typeof owner === 'string' && typeof shard === 'number' && Number.isSafeInteger(shard) ? { owner, shard } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The caller side of `serving`: sleeps that end early when the shard's owner announces itself.
 * Subscribes on the first wait only (most callers never back off).
 */
export class ServingWatch {
  private sub: Subscription | undefined;
  private readonly waiting = new Map<number, Set<() => void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjectPrefix: string,
  ) {}

  /** Resolves after `ms`, or sooner once a host announces that it serves `shard`. */
  sleep(shard: number, ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    if (!this.sub && !this.nc.isClosed()) {
      try {
        this.sub = listen(this.nc, this.subjectPrefix, 'serving', ({ shard: served }) => this.wake(served));
      } catch {
        // A draining connection: the timer alone ends the sleep.
      }
    }
    return new Promise<void>((resolve) => {
      const waiters = this.waiting.get(shard) ?? new Set<() => void>();
      this.waiting.set(shard, waiters);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(shard) === waiters) this.waiting.delete(shard);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  close(): void {
    for (const waiters of [...this.waiting.values()]) for (const done of [...waiters]) done();
    this.sub?.unsubscribe();
    this.sub = undefined;
  }

  private wake(shard: number): void {
    for (const done of [...(this.waiting.get(shard) ?? [])]) done();
  }
}
