/**
 * The owner's catch-ups of indexes left behind (index-catch-ups.ts): one pending per inbox,
 * retried with core's backoff a bounded number of times, at most `maxPending` inboxes at once
 * (the rest counted, not scheduled), stopped by a fence or by close; the record told `behind`
 * on a failed write and `caughtUp` only once a catch-up succeeded. Timers are vitest's fake ones.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FencedError, silentLogger, type InboxKey } from '@seqline/core';
import { IndexCatchUps, type BehindIndexLog } from '../src/index-catch-ups.ts';
import { inbox } from './harness.ts';

/** A catch-up whose outcomes the test decides: each call takes the next planned outcome (then succeeds). */
function plannedRuns(plan: Array<'fail' | 'fenced' | 'ok'>) {
  const calls: InboxKey[] = [];
  const run = (i: InboxKey): Promise<number> => {
    calls.push(i);
    const outcome = plan.shift() ?? 'ok';
    if (outcome === 'fail') return Promise.reject(new Error('index write refused'));
    if (outcome === 'fenced') return Promise.reject(new FencedError('a newer owner'));
    return Promise.resolve(7);
  };
  return { run, calls };
}

function recordingLog(): BehindIndexLog & { told: string[] } {
  const told: string[] = [];
  return { told, behind: (i) => told.push(`behind ${i}`), caughtUp: (i) => told.push(`caughtUp ${i}`) };
}

const retry = { initialMs: 100, maxMs: 400 };

describe('IndexCatchUps', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records a failed write, catches up at once, and clears the record only once caught up; one pending per inbox', async () => {
    const { run, calls } = plannedRuns(['ok']);
    const log = recordingLog();
    const catchUps = new IndexCatchUps(run, log, silentLogger, { retry });
    const bob = inbox('bob');
    catchUps.fellBehind(bob);
    catchUps.fellBehind(bob); // a second failure while the first catch-up is pending: the same catch-up
    expect(catchUps.stats()).toEqual({ pending: 1, caughtUp: 0, gaveUp: 0, dropped: 0 });
    await vi.runAllTimersAsync();
    expect(calls).toEqual([bob]);
    expect(log.told).toEqual([`behind ${bob}`, `behind ${bob}`, `caughtUp ${bob}`]);
    expect(catchUps.stats()).toEqual({ pending: 0, caughtUp: 1, gaveUp: 0, dropped: 0 });
  });

  it('retries a failing catch-up after the backoff delays, then gives up after maxAttempts, its record kept', async () => {
    const { run, calls } = plannedRuns(['fail', 'fail', 'fail', 'fail']);
    const log = recordingLog();
    const catchUps = new IndexCatchUps(run, log, silentLogger, { retry, maxAttempts: 3 });
    const bob = inbox('bob');
    catchUps.fellBehind(bob);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(49); // the first retry waits at least half of 100 ms
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(51 + 200);
    expect(calls).toHaveLength(3);
    await vi.runAllTimersAsync();
    expect(calls).toHaveLength(3);
    expect(catchUps.stats()).toEqual({ pending: 0, caughtUp: 0, gaveUp: 1, dropped: 0 });
    expect(log.told).toEqual([`behind ${bob}`]); // left for the next owner
  });

  it('a fenced catch-up is not retried', async () => {
    const { run, calls } = plannedRuns(['fenced']);
    const catchUps = new IndexCatchUps(run, undefined, silentLogger, { retry });
    catchUps.fellBehind(inbox('bob'));
    await vi.runAllTimersAsync();
    expect(calls).toHaveLength(1);
    expect(catchUps.stats()).toMatchObject({ pending: 0, gaveUp: 1 });
  });

  it('holds at most maxPending inboxes: the rest are counted as dropped, not scheduled, and scheduled again once there is room', async () => {
    const { run, calls } = plannedRuns(['fail', 'fail']);
    const catchUps = new IndexCatchUps(run, undefined, silentLogger, { retry, maxPending: 2 });
    expect(catchUps.schedule(inbox('a'))).toBe(true);
    expect(catchUps.schedule(inbox('b'))).toBe(true);
    expect(catchUps.schedule(inbox('c'))).toBe(false);
    expect(catchUps.stats()).toEqual({ pending: 2, caughtUp: 0, gaveUp: 0, dropped: 1 });
    await vi.runAllTimersAsync();
    expect(catchUps.stats()).toEqual({ pending: 0, caughtUp: 2, gaveUp: 0, dropped: 1 });
    expect(catchUps.schedule(inbox('c'))).toBe(true);
    await vi.runAllTimersAsync();
    // The retries' order follows their jittered delays: each of a and b once more, in either order.
    expect(calls.slice(0, 2)).toEqual([inbox('a'), inbox('b')]);
    expect(calls.slice(2, 4).sort()).toEqual([inbox('a'), inbox('b')]);
    expect(calls.slice(4)).toEqual([inbox('c')]);
  });

  it('close cancels the retries waiting and schedules nothing more', async () => {
    const { run, calls } = plannedRuns(['fail', 'fail']);
    const log = recordingLog();
    const catchUps = new IndexCatchUps(run, log, silentLogger, { retry });
    catchUps.fellBehind(inbox('bob'));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    catchUps.close();
    expect(catchUps.schedule(inbox('carol'))).toBe(false);
    await vi.runAllTimersAsync();
    expect(calls).toHaveLength(1);
    expect(catchUps.stats().pending).toBe(0);
    expect(log.told).toEqual([`behind ${inbox('bob')}`]);
  });
});
