/**
 * Which push bus (gateway process) holds which inboxes, as a publisher learns it from the
 * presence announcements of every bus (nats-presence.ts). Pure state: the caller feeds it the
 * messages it receives and the clock, and it says when to ask a bus for a full snapshot.
 *
 * Announcements travel on core NATS (at most once), so the table never trusts what it cannot
 * check: every delta and heartbeat carries its bus's sequence, a gap or a mismatch asks for a
 * snapshot, and while any bus is being re-read — or until every live bus has had the time to
 * send a heartbeat — `ready()` is false and the publisher falls back to one publish per inbox.
 */

export interface PresenceDelta {
  bus: string;
  seq: number;
  add: string[];
  del: string[];
}
export interface PresenceBeat {
  bus: string;
  seq: number;
}
export interface PresenceSnapshotPart {
  bus: string;
  seq: number;
  part: number;
  parts: number;
  inboxes: string[];
}

export interface PresenceTiming {
  /** How often a bus says it is alive. */
  heartbeatMs: number;
}

interface Resync {
  askedAt: number;
  /** Parts of one snapshot, keyed by its seq (an answer to an earlier ask may still arrive). */
  snapshots: Map<number, { parts: (string[] | undefined)[]; got: number }>;
  /** Deltas received while waiting: those after the snapshot's seq are applied on top. */
  buffered: PresenceDelta[];
}

interface BusView {
  seq: number;
  inboxes: Set<string>;
  seenAt: number;
  resync?: Resync;
}

export class PresenceTable {
  private readonly buses = new Map<string, BusView>();
  private trustFrom: number;

  constructor(
    private readonly timing: PresenceTiming,
    private readonly askSnapshot: (bus: string) => void,
    now: number,
  ) {
    this.trustFrom = now + this.graceMs;
  }

  /** Every live bus heartbeats within this; after it, a bus never heard of holds nobody. */
  private get graceMs(): number {
    return Math.ceil(this.timing.heartbeatMs * 1.5);
  }
  private get expiryMs(): number {
    return Math.ceil(this.timing.heartbeatMs * 3.5);
  }
  private get retryMs(): number {
    return this.timing.heartbeatMs * 2;
  }

  /** True when the table may be used to route: past the grace and no bus being re-read. */
  ready(now: number): boolean {
    if (now < this.trustFrom) return false;
    for (const view of this.buses.values()) if (view.resync) return false;
    return true;
  }

  /** After a reconnect: announcements may have been missed, trust nothing for a grace period. */
  distrust(now: number): void {
    this.trustFrom = now + this.graceMs;
  }

  /** Buses holding `inbox`. */
  busesOf(inbox: string): string[] {
    return [...this.holdersOf([inbox]).keys()];
  }

  /**
   * The inboxes of `inboxes` each bus holds, by bus (buses holding none are left out; `skip` is
   * the caller's own bus, which it knows better). One pass per bus, no allocation per inbox.
   */
  holdersOf(inboxes: readonly string[], skip?: string): Map<string, string[]> {
    const routes = new Map<string, string[]>();
    for (const [bus, view] of this.buses) {
      if (bus === skip || view.inboxes.size === 0) continue;
      const held: string[] = [];
      for (const inbox of inboxes) if (view.inboxes.has(inbox)) held.push(inbox);
      if (held.length > 0) routes.set(bus, held);
    }
    return routes;
  }

  get busCount(): number {
    return this.buses.size;
  }

  /** Inbox holdings known, over all buses (a user on two gateways counts twice). */
  get inboxCount(): number {
    let n = 0;
    for (const view of this.buses.values()) n += view.inboxes.size;
    return n;
  }

  delta(d: PresenceDelta, now: number): void {
    let view = this.buses.get(d.bus);
    if (!view) {
      view = { seq: 0, inboxes: new Set(), seenAt: now };
      this.buses.set(d.bus, view);
      // A bus's first delta is seq 1 from nothing; any later one needs the rest first.
      if (d.seq !== 1) this.resync(d.bus, view, now);
    }
    view.seenAt = now;
    if (view.resync) {
      view.resync.buffered.push(d);
      return;
    }
    if (d.seq <= view.seq) return; // a duplicate
    if (d.seq !== view.seq + 1) {
      this.resync(d.bus, view, now).buffered.push(d);
      return;
    }
    apply(view, d);
  }

  beat(b: PresenceBeat, now: number): void {
    let view = this.buses.get(b.bus);
    if (!view) {
      view = { seq: 0, inboxes: new Set(), seenAt: now };
      this.buses.set(b.bus, view);
      if (b.seq === 0) return; // a bus that never held anyone: nothing to read
      this.resync(b.bus, view, now);
      return;
    }
    view.seenAt = now;
    if (view.resync) {
      if (now - view.resync.askedAt >= this.retryMs) this.resync(b.bus, view, now);
    } else if (b.seq !== view.seq) {
      // Its last deltas were lost (or it restarted under the same id): read it whole.
      this.resync(b.bus, view, now);
    }
  }

  bye(bus: string): void {
    this.buses.delete(bus);
  }

  snapshotPart(p: PresenceSnapshotPart, now: number): void {
    const view = this.buses.get(p.bus);
    if (!view?.resync || p.parts < 1 || p.part < 0 || p.part >= p.parts) return;
    view.seenAt = now;
    const { snapshots } = view.resync;
    let snap = snapshots.get(p.seq);
    if (!snap) {
      snap = { parts: new Array<string[] | undefined>(p.parts).fill(undefined), got: 0 };
      snapshots.set(p.seq, snap);
    }
    if (snap.parts[p.part] !== undefined) return;
    snap.parts[p.part] = p.inboxes;
    if (++snap.got < p.parts) return;

    const { buffered } = view.resync;
    view.resync = undefined;
    view.seq = p.seq;
    view.inboxes = new Set(snap.parts.flatMap((part) => part ?? []));
    buffered.sort((a, b) => a.seq - b.seq);
    for (const d of buffered) this.delta(d, now);
  }

  /** Forgets buses that stopped heartbeating (killed without a goodbye). */
  sweep(now: number): void {
    for (const [bus, view] of this.buses) {
      if (now - view.seenAt > this.expiryMs) this.buses.delete(bus);
    }
  }

  private resync(bus: string, view: BusView, now: number): Resync {
    const resync: Resync = {
      askedAt: now,
      snapshots: view.resync?.snapshots ?? new Map<number, { parts: (string[] | undefined)[]; got: number }>(),
      buffered: view.resync?.buffered ?? [],
    };
    view.resync = resync;
    this.askSnapshot(bus);
    return resync;
  }
}

function apply(view: BusView, d: PresenceDelta): void {
  for (const inbox of d.add) view.inboxes.add(inbox);
  for (const inbox of d.del) view.inboxes.delete(inbox);
  view.seq = d.seq;
}

/** Shape checks for messages from other processes: a malformed one is dropped, not trusted. */
export function isDelta(x: unknown): x is PresenceDelta {
  const d = x as PresenceDelta;
  return isBeat(x) && isStrings(d.add) && isStrings(d.del);
}

export function isBeat(x: unknown): x is PresenceBeat {
  const b = x as PresenceBeat;
  return typeof x === 'object' && x !== null && typeof b.bus === 'string' && Number.isSafeInteger(b.seq) && b.seq >= 0;
}

export function isSnapshotPart(x: unknown): x is PresenceSnapshotPart {
  const p = x as PresenceSnapshotPart;
  return isBeat(x) && Number.isSafeInteger(p.part) && Number.isSafeInteger(p.parts) && isStrings(p.inboxes);
}

function isStrings(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}
