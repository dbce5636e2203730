import { describe, expect, it } from 'vitest';
import { msgEntry } from '@seqline/testing';
import { MAX_WINDOW_APPINFOS, WriterStates, advance, type StreamState } from '../src/scylla/writer-state.ts';

const state = (over: Partial<StreamState> = {}): StreamState => ({ term: undefined, head: 0, window: [], appinfos: new Map(), ...over });

describe('writer state', () => {
  it('moves the head and remembers the new appinfos', () => {
    const next = advance(state({ head: 2, window: [0], appinfos: new Map([['a', 1], ['b', 2]]) }), [msgEntry(3, 'c')]);
    expect(next.head).toBe(3);
    expect(next.window).toEqual([0]);
    expect([...(next.appinfos ?? [])]).toEqual([['a', 1], ['b', 2], ['c', 3]]);
  });

  it('keeps the last two non-empty buckets as the window and drops appinfos that leave it', () => {
    let s = advance(state(), [msgEntry(1, 'b0')]);
    s = advance(s, [msgEntry(65_536, 'b1')]);
    expect(s.window).toEqual([1, 0]);
    s = advance(s, [msgEntry(500_000, 'b7a'), msgEntry(500_001, 'b7b')]); // a jump: bucket 7 follows 1
    expect(s.window).toEqual([7, 1]);
    expect([...(s.appinfos?.keys() ?? [])].sort()).toEqual(['b1', 'b7a', 'b7b']);
  });

  it('stops holding appinfos once the window has too many', () => {
    const many = Array.from({ length: MAX_WINDOW_APPINFOS + 1 }, (_, i) => msgEntry(i + 1, `a${i}`));
    const s = advance(state(), many);
    expect(s.appinfos).toBeUndefined();
    expect(s.head).toBe(MAX_WINDOW_APPINFOS + 1);
    // Without appinfos it keeps the head and the window.
    expect(advance(s, [msgEntry(70_000, 'x')])).toMatchObject({ head: 70_000, window: [1, 0], appinfos: undefined });
  });

  it('gives a stream back only to the term that remembered it', () => {
    const states = new WriterStates();
    states.remember('s', state({ term: 'shard-1@4', head: 9 }));
    expect(states.get('s', 'shard-1@4')?.head).toBe(9);
    expect(states.get('s', 'shard-1@5')).toBeUndefined();
    expect(states.get('s', 'shard-1@4')).toBeUndefined(); // a newer term saw it: forgotten for good
  });
});
