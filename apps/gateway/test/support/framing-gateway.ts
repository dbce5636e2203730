/**
 * What the HTTP framing suites (http-framing.hostile.test.ts, http-routing.hostile.test.ts)
 * share: one gateway per transport with one allowed origin and a user token, the raw requests
 * they pipeline, and the check that a request is refused without an answer.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { AdminService } from '@seqline/messaging';
import type { TransportName } from '../../src/index.ts';
import { startGateway, type Started } from '../harness.ts';
import { exchange, request, type RawResponse } from '../raw-http.ts';

export const HEALTHZ = request('GET', '/healthz');
export const send = JSON.stringify({ appinfo: '0192-framing', to: { user: 'bob' }, type: 'text', body: { text: 'smuggled' } });
export const json = (r: RawResponse | undefined) =>
  JSON.parse(r?.body ?? 'null') as { ok: boolean; error?: { code: string; message: string } };
/** An admin service that must never be reached: any use fails the test. */
export const unreachableAdmin = new Proxy(
  {},
  {
    get: () => {
      throw new Error('admin service reached');
    },
  },
) as AdminService;

export interface FramingGateway {
  /** The gateway of this suite (started in beforeAll). */
  readonly started: Started;
  /** A valid token of the default user. */
  readonly token: string;
  port: () => number;
  bearer: (value?: string) => [string, string];
  /** Refused unframed: no byte back, and the valid request pipelined behind it is not served. */
  expectUnanswered: (bytes: string) => Promise<void>;
}

/** Registers the suite's hooks: start before all, clear recorded calls after each, close after all. */
export function useFramingGateway(transport: TransportName): FramingGateway {
  let started: Started | undefined;
  let token = '';
  const current = (): Started => {
    if (!started) throw new Error('framing gateway not started');
    return started;
  };
  beforeAll(async () => {
    started = await startGateway(transport, { allowedOrigins: ['https://app.example.com'] });
    token = await started.token();
  });
  afterAll(async () => {
    await started?.gateway.close();
  });
  afterEach(() => {
    if (started) started.messaging.calls.length = 0;
  });
  const port = () => current().gateway.port;
  return {
    get started() {
      return current();
    },
    get token() {
      return token;
    },
    port,
    bearer: (value = token) => ['Authorization', `Bearer ${value}`],
    expectUnanswered: async (bytes) => {
      const answer = await exchange(port(), bytes + HEALTHZ);
      expect(answer.responses).toEqual([]);
      expect(answer.rest).toBe('');
      expect(current().messaging.calls).toEqual([]);
    },
  };
}
