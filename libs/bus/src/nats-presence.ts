/**
 * Presence of inboxes on push buses, over core NATS, so that a push to many inboxes (a huge
 * group's members) costs one publish per gateway holding some of them instead of one per
 * member, online or not (docs/large-groups.md, "Push").
 *
 * - A bus holding subscriptions (a gateway) runs a `PresenceAnnouncer`: it publishes what it
 *   gained and lost since its last delta (numbered), a heartbeat with its current number, a
 *   goodbye on close, and answers snapshot requests in parts.
 * - A bus publishing to many (a worker) runs a `PresenceDirectory`: it follows those messages
 *   in a `PresenceTable` and routes; when the table is not ready it says so, and the caller
 *   publishes per inbox as before. Nothing here decides who may get a push: the caller names
 *   the inboxes, and a gateway delivers only to those it holds.
 */
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '@seqline/core';
import { isBeat, isDelta, isSnapshotPart, PresenceTable, type PresenceDelta } from './presence-table.ts';

export interface PresenceOptions {
  /** Subject root of the presence protocol (e.g. `<ns>.push.p`). */
  root: string;
  heartbeatMs: number;
  logger: Logger;
}

/** Inboxes per delta, snapshot part or routed push: keeps every message far below max_payload. */
export const PRESENCE_CHUNK = 1_000;

export function presenceSubjects(root: string) {
  return {
    events: `${root}.ev.*`,
    delta: `${root}.ev.delta`,
    beat: `${root}.ev.hb`,
    bye: `${root}.ev.bye`,
    snapshotOf: (bus: string) => `${root}.snap.${bus}`,
    partsFor: (directory: string) => `${root}.parts.${directory}`,
    /** Pushes routed to one bus: `{"inboxes": [...], "push": {...}}`. */
    to: (bus: string) => `${root}.to.${bus}`,
  };
}

const newId = () => randomUUID().replaceAll('-', '');

function send(nc: NatsConnection, logger: Logger, subject: string, body: unknown): void {
  try {
    nc.publish(subject, JSON.stringify(body));
  } catch (err) {
    // A lost announcement is caught by the next heartbeat's seq; nothing to retry here.
    logger.warn({ err, subject }, 'presence message not published');
  }
}

/** Tells every directory which inboxes this bus holds. */
export class PresenceAnnouncer {
  private seq = 0;
  private readonly announced = new Set<string>();
  private readonly pending = new Map<string, boolean>();
  private flushQueued = false;
  private closed = false;
  private readonly subjects: ReturnType<typeof presenceSubjects>;
  private readonly snapshotSub: Subscription;
  private readonly timer: NodeJS.Timeout;

  /** `id` names this bus in every announcement (default: a random one). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: PresenceOptions,
    readonly id: string = newId(),
  ) {
    this.subjects = presenceSubjects(options.root);
    this.snapshotSub = nc.subscribe(this.subjects.snapshotOf(this.id), {
      callback: (err, msg) => {
        if (!err) this.answer(msg);
      },
    });
    this.timer = setInterval(() => this.send(this.subjects.beat, { bus: this.id, seq: this.seq }), options.heartbeatMs);
    this.timer.unref();
  }

  /** Records that this bus now holds (or no longer holds) `inbox`; announced on the next tick. */
  set(inbox: string, held: boolean): void {
    if (this.closed) return;
    this.pending.set(inbox, held);
    if (this.flushQueued) return;
    this.flushQueued = true;
    // One delta for every change of a tick: a reconnect storm is not a message per user.
    queueMicrotask(() => this.flush());
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.snapshotSub.unsubscribe();
    this.send(this.subjects.bye, { bus: this.id, seq: this.seq });
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.closed) return;
    let delta: PresenceDelta | undefined;
    for (const [inbox, held] of this.pending) {
      if (held === this.announced.has(inbox)) continue; // a change undone within the tick
      delta ??= { bus: this.id, seq: ++this.seq, add: [], del: [] };
      if (held) {
        this.announced.add(inbox);
        delta.add.push(inbox);
      } else {
        this.announced.delete(inbox);
        delta.del.push(inbox);
      }
      if (delta.add.length + delta.del.length >= PRESENCE_CHUNK) {
        this.send(this.subjects.delta, delta);
        delta = undefined;
      }
    }
    this.pending.clear();
    if (delta) this.send(this.subjects.delta, delta);
  }

  /** A snapshot at the current seq, in parts; the directory applies later deltas on top. */
  private answer(msg: Msg): void {
    if (!msg.reply || this.closed) return;
    const all = [...this.announced];
    const parts = Math.max(1, Math.ceil(all.length / PRESENCE_CHUNK));
    for (let part = 0; part < parts; part++) {
      const inboxes = all.slice(part * PRESENCE_CHUNK, (part + 1) * PRESENCE_CHUNK);
      this.send(msg.reply, { bus: this.id, seq: this.seq, part, parts, inboxes });
    }
  }

  private send(subject: string, body: unknown): void {
    send(this.nc, this.options.logger, subject, body);
  }
}

/** Follows every announcer and routes a push for many inboxes to the buses holding them. */
export class PresenceDirectory {
  readonly id = newId();
  private readonly table: PresenceTable;
  private readonly subs: Subscription[];
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: PresenceOptions,
  ) {
    const subjects = presenceSubjects(options.root);
    const { logger } = options;
    this.table = new PresenceTable(
      { heartbeatMs: options.heartbeatMs },
      (bus) => {
        try {
          nc.publish(subjects.snapshotOf(bus), '', { reply: subjects.partsFor(this.id) });
        } catch (err) {
          logger.warn({ err, bus }, 'presence snapshot not requested'); // asked again on its next heartbeat
        }
      },
      Date.now(),
    );
    const parse = (msg: Msg): unknown => {
      try {
        return msg.json<unknown>();
      } catch {
        return undefined;
      }
    };
    this.subs = [
      nc.subscribe(subjects.events, {
        callback: (err, msg) => {
          if (err) return;
          const body = parse(msg);
          const now = Date.now();
          if (msg.subject === subjects.delta && isDelta(body)) this.table.delta(body, now);
          else if (msg.subject === subjects.beat && isBeat(body)) this.table.beat(body, now);
          else if (msg.subject === subjects.bye && isBeat(body)) this.table.bye(body.bus);
          else logger.warn({ subject: msg.subject }, 'dropping a malformed presence message');
        },
      }),
      nc.subscribe(subjects.partsFor(this.id), {
        callback: (err, msg) => {
          const body = err ? undefined : parse(msg);
          if (isSnapshotPart(body)) this.table.snapshotPart(body, Date.now());
        },
      }),
    ];
    this.timer = setInterval(() => this.table.sweep(Date.now()), options.heartbeatMs);
    this.timer.unref();
    void this.watchReconnects();
  }

  /**
   * The inboxes of `inboxes` each bus holds, by bus id, or undefined when the table cannot be
   * trusted yet (the caller then publishes per inbox). `local` is the caller's own bus, known
   * exactly without asking the network.
   */
  route(inboxes: readonly string[], local?: { id: string; holds(inbox: string): boolean }): Map<string, string[]> | undefined {
    if (this.closed || !this.table.ready(Date.now())) return undefined;
    const routes = this.table.holdersOf(inboxes, local?.id);
    if (local) {
      const held = inboxes.filter((inbox) => local.holds(inbox));
      if (held.length > 0) routes.set(local.id, held);
    }
    return routes;
  }

  /** What the directory knows now (for metrics). */
  stats(): { ready: boolean; gateways: number; inboxes: number } {
    return { ready: !this.closed && this.table.ready(Date.now()), gateways: this.table.busCount, inboxes: this.table.inboxCount };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const sub of this.subs) sub.unsubscribe();
  }

  /** Messages may have been missed while disconnected: route per inbox until re-checked. */
  private async watchReconnects(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (this.closed) return;
      if (status.type === 'reconnect') this.table.distrust(Date.now());
    }
  }
}
