import { describe, expect, it } from 'vitest';
import { KeyedDispatcher } from '../src/index.ts';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Items are released by hand, so every assertion sees an exact state. */
function harness(limits: ConstructorParameters<typeof KeyedDispatcher>[0]) {
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const dispatcher = new KeyedDispatcher<string>(limits, (item) => {
    started.push(item);
    return new Promise<void>((resolve) => release.set(item, resolve));
  });
  const finish = async (item: string) => {
    release.get(item)!();
    await tick();
  };
  return { dispatcher, started, finish };
}

describe('KeyedDispatcher', () => {
  it('serves keys round-robin, so a short key is not queued behind a long one', async () => {
    const { dispatcher, started, finish } = harness({ concurrency: 1 });
    for (let i = 0; i < 5; i++) dispatcher.submit(`a${i}`, 'a');
    dispatcher.submit('b0', 'b');
    dispatcher.submit('b1', 'b');
    for (let i = 0; i < 4; i++) await finish(started[started.length - 1]!);
    // a0 started on submit; then the two keys alternate.
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2', 'b1']);
  });

  it('lets an item of a free key overtake items of a saturated key without holding a pool slot', async () => {
    const { dispatcher, started } = harness({ concurrency: 3, perKeyConcurrency: 1 });
    dispatcher.submit('a0', 'a');
    dispatcher.submit('a1', 'a');
    dispatcher.submit('a2', 'a');
    dispatcher.submit('b0', 'b');
    dispatcher.submit('u0', undefined);
    dispatcher.submit('u1', undefined);
    expect(started).toEqual(['a0', 'b0', 'u0']);
    expect([dispatcher.inFlight, dispatcher.waiting, dispatcher.maxInFlightPerKey]).toEqual([3, 3, 1]);
  });

  it('treats a nonsensical live limit as 1 and rejects a bad pool size', () => {
    let limit = Number.NaN;
    const { dispatcher, started } = harness({ concurrency: 5, perKeyConcurrency: () => limit });
    dispatcher.submit('a0', 'a');
    dispatcher.submit('a1', 'a');
    expect(started).toEqual(['a0']);
    limit = 0;
    expect(dispatcher.perKeyLimit()).toBe(1);
    expect(() => new KeyedDispatcher({ concurrency: 0 }, async () => {})).toThrow(RangeError);
  });

  it('stop hands back waiting items, starts nothing more, and idle waits for running ones', async () => {
    const { dispatcher, started, finish } = harness({ concurrency: 1 });
    dispatcher.submit('x', 'k');
    dispatcher.submit('y', 'k');
    expect(dispatcher.stop()).toEqual(['y']);
    dispatcher.submit('z', 'k');
    let idle = false;
    const done = dispatcher.idle().then(() => {
      idle = true;
    });
    await tick();
    expect(idle).toBe(false);
    await finish('x');
    await done;
    expect(started).toEqual(['x']);
  });

  it('frees the slot of an item whose run throws', async () => {
    let calls = 0;
    const dispatcher = new KeyedDispatcher<number>({ concurrency: 1 }, async () => {
      calls++;
      throw new Error('boom');
    });
    dispatcher.submit(1, 'k');
    dispatcher.submit(2, 'k');
    await dispatcher.idle();
    await tick();
    expect(calls).toBe(2);
    expect(dispatcher.inFlight).toBe(0);
  });
});
