import { OverloadedError } from '@seqline/core';
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';

const TRANSPORT_ERRORS = [TimeoutError, NoRespondersError, RequestError, ConnectionError, ClosedConnectionError, DrainingConnectionError];

/**
 * A NATS failure that says nothing about the request itself: the server is unreachable,
 * restarting (JetStream answers 503 until its streams are recovered) or too slow. A retry may
 * succeed, so callers see OVERLOADED rather than INTERNAL.
 */
export function isNatsUnavailable(err: unknown): boolean {
  return unavailable(err, 0);
}

function unavailable(err: unknown, depth: number): boolean {
  if (TRANSPORT_ERRORS.some((type) => err instanceof type)) return true;
  if (err instanceof JetStreamApiError) return err.status === 503;
  // JetStream wraps a transport failure with it as the cause (no responders on a publish becomes
  // JetStreamNotEnabled).
  return err instanceof Error && depth < 3 && unavailable(err.cause, depth + 1);
}

/** `err` as OverloadedError (cause kept) when NATS was unavailable; otherwise unchanged. */
export function natsError(what: string, err: unknown): unknown {
  return isNatsUnavailable(err) ? new OverloadedError(`${what}: NATS unavailable, retry later`, { cause: err }) : err;
}
