import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../src/turn-batch.ts';

describe('TurnBatch', () => {
  it('runs what a turn queued after it, together and in order, and a throw stops nothing', async () => {
    const errors: unknown[] = [];
    const batch = new TurnBatch((err) => errors.push(err));
    const ran: string[] = [];
    let microtasksBetween = 0;
    batch.add(() => {
      ran.push('a');
      queueMicrotask(() => {
        microtasksBetween = ran.length;
      });
    });
    batch.add(() => {
      throw new Error('boom');
    });
    batch.add(() => ran.push('c'));
    expect(ran).toEqual([]); // nothing runs in the turn that queued it
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['a', 'c']);
    expect(microtasksBetween).toBe(2); // the microtask queued by a ran only after c: one batch
    expect(errors).toHaveLength(1);
    batch.add(() => ran.push('d')); // a later turn gets its own run
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['a', 'c', 'd']);
  });
});
