/**
 * A socket's token expiry (ClientSession): the timer that closes the socket when its token
 * expires, and the `auth` op's renewal that moves it.
 */
import { ForbiddenError, UnauthorizedError, type Clock } from '@seqline/core';
import type { Caller } from '@seqline/messaging';

/** The longest delay setTimeout takes (about 24.8 days); a later expiry re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class SessionExpiry {
  private timer: NodeJS.Timeout | null = null;

  /** `expiresAt`: epoch ms, null when the verifier reports none; `onExpired` closes the socket. */
  constructor(
    private expiresAt: number | null,
    private readonly clock: Clock,
    private readonly onExpired: () => void,
  ) {}

  expired(): boolean {
    return this.expiresAt !== null && this.clock.now() >= this.expiresAt;
  }

  /** Closes the socket when its token expires, so an idle expired socket gets no more pushes. */
  arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.expiresAt === null) return;
    const wait = this.expiresAt - this.clock.now();
    if (wait <= 0) return this.onExpired();
    this.timer = setTimeout(() => this.arm(), Math.min(wait, MAX_TIMER_MS));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The `auth` op, given the verified claims: a valid, unexpired token of this very user and tenant moves the expiry. */
  renew(claims: { tenant: string; user: string }, caller: Caller): { exp: number | null } {
    if (claims.tenant !== caller.tenant || claims.user !== caller.user) {
      throw new ForbiddenError('auth: the token is for another user; open a new socket for it');
    }
    const expiresAt = expiryOf(claims);
    // The verifier tolerates clock skew; a socket does not outlive its token's own exp.
    if (expiresAt !== null && expiresAt <= this.clock.now()) throw new UnauthorizedError('token expired');
    this.expiresAt = expiresAt;
    this.arm();
    return { exp: expiresAt === null ? null : Math.floor(expiresAt / 1000) };
  }
}

/** The expiry a verifier reports (createTokenVerifier: `expiresAt`, epoch ms), if any. */
export function expiryOf(claims: object): number | null {
  const expiresAt = (claims as { expiresAt?: unknown }).expiresAt;
  return typeof expiresAt === 'number' && Number.isFinite(expiresAt) ? expiresAt : null;
}
