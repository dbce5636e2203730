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
});
