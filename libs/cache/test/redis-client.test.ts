/**
 * The cache client when its connection drops with commands in flight and the first reconnect
 * succeeds (a killed connection, a restart the process slept through): every command settles,
 * and the commands after it are served.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { connectRedis, describeWithRedis, probeRedis, REDIS_URL, uniquePrefix, waitReady } from './harness.ts';

const probe = await probeRedis();

type Outcome = { settled: 'resolved' | 'rejected'; value: unknown };

/** `promise`'s outcome, handled from now on (its rejection is what a test waits for). */
function outcomeOf(promise: Promise<unknown>): Promise<Outcome> {
  return promise.then(
    (value) => ({ settled: 'resolved', value }),
    (value: unknown) => ({ settled: 'rejected', value }),
  );
}

/** The outcome, or 'pending' when it has not come within `ms`. */
function within(outcome: Promise<Outcome>, ms: number): Promise<Outcome | 'pending'> {
  return Promise.race([outcome, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);
}

describeWithRedis('cache Redis client: a dropped connection', probe, () => {
  let client: Redis;
  let admin: Redis;
  const prefix = uniquePrefix();
  beforeAll(async () => {
    client = await connectRedis();
    admin = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    client.disconnect();
    await admin.quit();
  });

  it('rejects the commands the dropped connection left unanswered, and serves the next ones (round b1747661)', async () => {
    const id = await client.client('ID');
    // In flight when the connection dies: an auto-pipelined command Redis holds for 5 s.
    const inFlight = outcomeOf(client.blpop(`${prefix}never`, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await admin.client('KILL', 'ID', String(id));
    // Redis is up: the first reconnect succeeds (ioredis used to forget the unanswered
    // commands there without settling them, and its auto-pipeline waited on them for good).
    await new Promise((resolve) => setTimeout(resolve, 50));
    await waitReady(client);
    expect(await within(inFlight, 3_000)).toMatchObject({ settled: 'rejected' });
    expect(await within(outcomeOf(client.set(`${prefix}after`, 'v')), 3_000)).toEqual({ settled: 'resolved', value: 'OK' });
    expect(await within(outcomeOf(client.get(`${prefix}after`)), 3_000)).toEqual({ settled: 'resolved', value: 'v' });
    await client.del(`${prefix}after`);
  }, 20_000);
});
