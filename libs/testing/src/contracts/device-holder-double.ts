/**
 * A gateway's sessions as the device bus sees them (DeviceHolder), for the DeviceBus contract:
 * it picks with core's rule like a gateway does, records when each session was told, and can
 * tell at once, on release, never, or reject.
 */
import {
  displacedSessions,
  type DeviceHolder,
  type DeviceSession,
  type Displacement,
  type DisplaceRequest,
  type KickRequest,
  type Logger,
  type Platform,
} from '@seqline/core';

export type TellMode = 'at-once' | 'on-release' | 'never' | 'reject';

interface Held extends DeviceSession {
  tenant: string;
  user: string;
  kicked: boolean;
}

export class HolderDouble implements DeviceHolder {
  mode: TellMode = 'at-once';
  /** performance.now() when each displaced session was told. */
  readonly toldAt = new Map<string, number>();
  private readonly sessions: Held[] = [];
  private readonly waiting: Array<() => void> = [];
  private nextId = 0;

  constructor(readonly gateway: string) {}

  /** A live session of `tenant:user` here; returns its description (the `incoming` of a login). */
  add(tenant: string, user: string, device: { dev?: string; plat?: Platform } = {}, session?: string): DeviceSession {
    const held: Held = {
      tenant,
      user,
      session: session ?? `${this.gateway}-s${++this.nextId}`,
      since: 0,
      gateway: this.gateway,
      kicked: false,
      ...device,
    };
    this.sessions.push(held);
    const { tenant: _t, user: _u, kicked: _k, ...described } = held;
    return described;
  }

  kicked(session: string): boolean {
    return this.sessions.find((s) => s.session === session)?.kicked === true;
  }

  /** Tells every session kicked in mode `on-release`. */
  release(): void {
    for (const tell of this.waiting.splice(0)) tell();
  }

  pick(request: DisplaceRequest): string[] {
    return displacedSessions(request.policy, this.list(request.tenant, request.user), request.incoming).map((s) => s.session);
  }

  kick(request: KickRequest): Displacement {
    const named = new Set(request.sessions);
    const hit = this.sessions.filter((s) => s.tenant === request.tenant && s.user === request.user && !s.kicked && named.has(s.session));
    for (const s of hit) s.kicked = true;
    const tell = () => hit.forEach((s) => this.toldAt.set(s.session, performance.now()));
    let told: Promise<void>;
    if (hit.length === 0 || this.mode === 'at-once') told = Promise.resolve().then(tell);
    else if (this.mode === 'on-release') told = new Promise((resolve) => this.waiting.push(() => (tell(), resolve())));
    else if (this.mode === 'never') told = new Promise(() => undefined);
    else told = Promise.reject(new Error('the kicked frame could not be sent'));
    return { displaced: hit.length, told };
  }

  list(tenant: string, user: string): DeviceSession[] {
    return this.sessions
      .filter((s) => s.tenant === tenant && s.user === user && !s.kicked)
      .map(({ tenant: _t, user: _u, kicked: _k, ...described }) => described);
  }
}

/** A logger that keeps what was said at warn and error. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; msg: string }> } {
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = {
    lines,
    debug: () => undefined,
    info: () => undefined,
    warn: (_obj: object, msg?: string) => void lines.push({ level: 'warn', msg: msg ?? '' }),
    error: (_obj: object, msg?: string) => void lines.push({ level: 'error', msg: msg ?? '' }),
    child: () => logger,
  };
  return logger;
}
