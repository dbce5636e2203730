import { describe, expect, it } from 'vitest';
import { LruMap } from '../src/index.ts';

describe('LruMap', () => {
  it('keeps at most maxKeys, dropping the least recently set', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 3); // a is now the most recent
    m.set('c', 4);
    expect([m.get('a'), m.get('b'), m.get('c'), m.size]).toEqual([3, undefined, 4, 2]);
  });

  it('holds nothing with maxKeys 0', () => {
    const m = new LruMap<string, number>(0);
    m.set('a', 1);
    expect([m.get('a'), m.size]).toEqual([undefined, 0]);
  });

  it('bounds the total weight, re-weighing a value on set and freeing it on delete', () => {
    const m = new LruMap<string, string[]>(5, (v) => v.length);
    m.set('a', ['x', 'y']);
    m.set('b', ['x', 'y', 'z']);
    expect([m.size, m.weight]).toEqual([2, 5]);
    m.set('b', ['x', 'y', 'z', 'w']); // heavier now: a (least recent) goes
    expect([m.get('a'), m.size, m.weight]).toEqual([undefined, 1, 4]);
    m.delete('b');
    expect([m.size, m.weight]).toEqual([0, 0]);
    m.set('c', ['1', '2', '3', '4', '5', '6']); // alone above the bound: not kept
    expect([m.get('c'), m.weight]).toEqual([undefined, 0]);
  });
});
