import { describe, expect, it } from 'vitest';
import { InboxStates } from '../src/inbox-states.ts';
import { KeyBudget } from '../src/index.ts';
import { inbox as key } from './harness.ts';

const busy = (t: InboxStates, user: string): void => {
  t.use(key(user)).pending.push({ kind: 'receipt', appinfo: 'a', readers: [], resolve: () => {}, reject: () => {} });
};

describe('InboxStates', () => {
  it('keeps one state per inbox, with its shard and no head yet', () => {
    const t = new InboxStates(8, 10, 1000);
    const a = t.use(key('u1'));
    expect(t.use(key('u1'))).toBe(a);
    expect(a).toMatchObject({ inbox: key('u1'), head: undefined, pending: [] });
    expect(a.shard).toBeGreaterThanOrEqual(0);
    expect(a.shard).toBeLessThan(8);
    expect(t.size).toBe(1);
  });

  it('at the cap drops the least recently used idle inbox, never a busy one', () => {
    const t = new InboxStates(8, 3, 1000);
    busy(t, 'a');
    t.use(key('b'));
    t.use(key('c'));
    t.use(key('b')); // b is now the most recent: c is the oldest idle one
    t.use(key('d'));
    expect(t.size).toBe(3);
    expect(t.get(key('a'))).toBeDefined(); // oldest, but busy
    expect(t.get(key('c'))).toBeUndefined();
    expect(t.get(key('b'))).toBeDefined();
  });

  it('lets the cap go soft when every inbox is busy (nothing queued is dropped)', () => {
    const t = new InboxStates(8, 2, 1000);
    for (const user of ['a', 'b', 'c']) busy(t, user);
    expect(t.size).toBe(3);
  });

  it('sweeps only inboxes idle since before the cutoff', () => {
    const t = new InboxStates(8, 10, 1000);
    t.use(key('old')).lastUsed = 100;
    t.use(key('recent')).lastUsed = 1500;
    busy(t, 'queued');
    expect(t.sweep(2000)).toBe(1);
    expect(t.get(key('old'))).toBeUndefined();
    expect(t.get(key('recent'))).toBeDefined();
    expect(t.get(key('queued'))).toBeDefined();
  });

  it('lists the drain loops still running', async () => {
    const t = new InboxStates(8, 10, 1000);
    const running = Promise.resolve();
    t.use(key('a')).draining = running;
    t.use(key('b'));
    expect(t.running()).toEqual([running]);
    await running;
  });

  it('owners sharing a budget stay within it together, never dropping a busy or a just-made state', () => {
    const budget = new KeyBudget(6);
    const owners = [0, 1, 2].map(() => new InboxStates(8, 100, 1000, budget));
    busy(owners[0]!, 'busy-0');
    for (let i = 0; i < 30; i++) {
      const t = owners[i % 3]!;
      const made = t.use(key(`o${i % 3}-${i}`));
      // The state use() returns is the one in the table: an op queued on it is the inbox's only writer.
      expect(t.get(key(`o${i % 3}-${i}`))).toBe(made);
      expect(budget.size).toBe(owners.reduce((n, o) => n + o.size, 0));
      expect(budget.size).toBeLessThanOrEqual(6);
    }
    expect(owners[0]!.get(key('busy-0'))).toBeDefined();
    // Sweeps and a closed owner give their count back.
    expect(owners[1]!.sweep(10_000)).toBeGreaterThan(0);
    expect(budget.size).toBe(owners.reduce((n, o) => n + o.size, 0));
    owners[2]!.release();
    expect(budget.holderCount).toBe(2);
    expect(budget.size).toBe(owners[0]!.size + owners[1]!.size);
  });

  it('over a shared budget, a new state is not shed even when it is the only idle one', () => {
    const budget = new KeyBudget(2);
    const t = new InboxStates(8, 100, 1000, budget);
    busy(t, 'a1');
    busy(t, 'a2');
    const made = t.use(key('a3'));
    expect(t.get(key('a3'))).toBe(made);
    expect(t.size).toBe(3); // the budget goes soft rather than drop queued work
    expect(budget.size).toBe(3);
  });
});
