import { describe, expect, it } from 'vitest';
import { OverloadedError } from '@seqline/core';
import { NoRespondersError, RequestError, TimeoutError, errors } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { isNatsUnavailable, natsError } from '../src/index.ts';

describe('isNatsUnavailable', () => {
  it('holds for transport failures, directly or as a cause', () => {
    expect(isNatsUnavailable(new TimeoutError())).toBe(true);
    expect(isNatsUnavailable(new errors.ClosedConnectionError())).toBe(true);
    const noResponders = new RequestError('no responders', { cause: new NoRespondersError('jobs.fanout') });
    expect(isNatsUnavailable(new Error('jetstream is not enabled', { cause: noResponders }))).toBe(true);
  });

  it('holds for a JetStream 503 and not for an API verdict on the request', () => {
    expect(
      isNatsUnavailable(new JetStreamApiError({ code: 503, err_code: 10039, description: 'JetStream system temporarily unavailable' })),
    ).toBe(true);
    expect(isNatsUnavailable(new JetStreamApiError({ code: 400, err_code: 10054, description: 'maximum payload exceeded' }))).toBe(false);
    expect(isNatsUnavailable(new Error('boom'))).toBe(false);
    expect(isNatsUnavailable('timeout')).toBe(false);
  });

  it('natsError maps only the unavailable ones to OverloadedError, keeping the cause', () => {
    const timeout = new TimeoutError();
    const mapped = natsError('job x not queued', timeout);
    expect(mapped).toBeInstanceOf(OverloadedError);
    expect((mapped as OverloadedError).cause).toBe(timeout);
    const other = new Error('boom');
    expect(natsError('job x not queued', other)).toBe(other);
  });
});
