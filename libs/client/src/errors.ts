import type { ErrorCode } from './wire.ts';

/**
 * Client-side failure codes, next to the server's protocol codes:
 * - TIMEOUT: no reply within requestTimeoutMs (the request may or may not have been applied).
 * - DISCONNECTED: the socket closed before the reply came (same uncertainty).
 * - CLOSED: the client was closed by the app; nothing more will be attempted.
 * - PROTOCOL: the server sent something that does not follow the protocol.
 * - CONFIG: the client cannot run as configured (no WebSocket implementation in this runtime).
 */
export type ClientSideCode = 'TIMEOUT' | 'DISCONNECTED' | 'CLOSED' | 'PROTOCOL' | 'CONFIG';

export type ClientErrorCode = ErrorCode | ClientSideCode;

export class SeqlineClientError extends Error {
  constructor(
    readonly code: ClientErrorCode | (string & {}),
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SeqlineClientError';
  }

  /** The outcome is unknown (no answer): safe to resend only for idempotent requests. */
  get unanswered(): boolean {
    return this.code === 'TIMEOUT' || this.code === 'DISCONNECTED';
  }

  /** The server refused for load reasons: retry after backing off. */
  get busy(): boolean {
    return this.code === 'OVERLOADED' || this.code === 'RATE_LIMITED';
  }
}
