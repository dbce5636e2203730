/** appendWithin, runFollowUp and chainAppends: when a follow-up runs, and how a slow or failing one ends. */
import { describe, expect, it } from 'vitest';
import { appendWithin, chainAppends, inboxKey, runFollowUp, silentLogger } from '../src/index.ts';
import type { AppendFn, AppendOutcome, NewEntry } from '../src/index.ts';

const inbox = inboxKey('t', 'bob');
const entry: NewEntry = {
  kind: 'msg',
  appinfo: 'a1',
  from: 'alice',
  sendTime: 1,
  type: 'text',
  body: {},
  conv: { type: 'user', id: 'alice' },
};
const after =
  (ms: number, outcome: AppendOutcome[] | Error): AppendFn =>
  () =>
    new Promise((resolve, reject) => setTimeout(() => (outcome instanceof Error ? reject(outcome) : resolve(outcome)), ms));

describe('appendWithin', () => {
  it('is appended when the append resolves in time', async () => {
    expect(await appendWithin(after(1, [{ seq: 1, duplicate: false }]), inbox, [entry], 200, silentLogger)).toBe('appended');
  });

  it('is failed when the append throws, or at the timeout when it is late', async () => {
    expect(await appendWithin(after(1, new Error('owner gone')), inbox, [entry], 200, silentLogger)).toBe('failed');
    const t0 = Date.now();
    expect(await appendWithin(after(500, [{ seq: 1, duplicate: false }]), inbox, [entry], 50, silentLogger)).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(400);
  });
});

describe('runFollowUp', () => {
  it('runs the follow-up only when every first outcome is new', async () => {
    const calls: string[] = [];
    const append: AppendFn = async ({ inbox: i, entries }) => {
      calls.push(`${i}:${entries.map((e) => e.appinfo).join()}`);
      return [{ seq: 9, duplicate: false }];
    };
    const next = { inbox, entries: [entry], timeoutMs: 100 };
    expect(
      await runFollowUp(
        [
          { seq: 1, duplicate: false },
          { seq: 2, duplicate: true },
        ],
        next,
        append,
        silentLogger,
      ),
    ).toBe('skipped');
    expect(calls).toEqual([]);
    expect(await runFollowUp([{ seq: 1, duplicate: false }], next, append, silentLogger)).toBe('appended');
    expect(calls).toEqual(['t:bob:a1']);
  });
});

describe('chainAppends', () => {
  const fresh: AppendOutcome[] = [{ seq: 4, duplicate: false }];

  it('starts the follow-up when the first append reports durable, and once only', async () => {
    const events: string[] = [];
    const chained = await chainAppends(
      async (durable) => {
        durable(fresh);
        durable(fresh);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push('first resolved');
        return fresh;
      },
      async (outcomes) => {
        events.push(`follow-up after ${outcomes[0]?.seq}`);
        return 'appended';
      },
    );
    expect(chained).toEqual({ outcomes: fresh, next: 'appended' });
    expect(events).toEqual(['follow-up after 4', 'first resolved']);
  });

  it('starts it after the first append when nothing reports durable', async () => {
    const events: string[] = [];
    const chained = await chainAppends(
      async () => {
        events.push('first resolved');
        return fresh;
      },
      async () => {
        events.push('follow-up');
        return 'skipped';
      },
    );
    expect(chained.next).toBe('skipped');
    expect(events).toEqual(['first resolved', 'follow-up']);
  });

  it('rethrows a first append that fails after it was durable, without an unhandled follow-up', async () => {
    const failing = chainAppends(
      async (durable) => {
        durable(fresh);
        throw new Error('late');
      },
      () => Promise.reject(new Error('follow-up failed too')),
    );
    await expect(failing).rejects.toThrow('late');
  });
});
