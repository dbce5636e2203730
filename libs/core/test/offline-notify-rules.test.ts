import { describe, expect, it } from 'vitest';
import { NOTIFY_PREVIEW_MAX_CHARS, notifyItemsOf, notifyPreviewOf, type Entry, type EntryKind, type Json } from '../src/index.ts';

const OWNER = 'bob';
let seq = 0;
function entry(over: Partial<Entry> & { kind?: EntryKind } = {}): Entry {
  seq++;
  return {
    seq,
    kind: 'msg',
    appinfo: `a${seq}`,
    conv: { type: 'user', id: 'alice' },
    from: 'alice',
    sendTime: 1,
    type: 'text',
    body: { text: 'hi' },
    ...over,
  };
}

describe('notifyItemsOf', () => {
  it('keeps messages from others, in order, with conv, from, appinfo and mention', () => {
    const a = entry();
    const b = entry({ conv: { type: 'group', id: 'g1' }, from: 'carol', mentions: ['bob'] });
    expect(notifyItemsOf(OWNER, [a, b])).toEqual([
      { seq: a.seq, conv: { type: 'user', id: 'alice' }, from: 'alice', appinfo: a.appinfo, mention: false },
      { seq: b.seq, conv: { type: 'group', id: 'g1' }, from: 'carol', appinfo: b.appinfo, mention: true },
    ]);
  });

  it("never the owner's own copies, not even one mentioning itself", () => {
    expect(notifyItemsOf(OWNER, [entry({ from: OWNER }), entry({ from: OWNER, mentions: [OWNER] })])).toEqual([]);
  });

  it('never a control entry', () => {
    const controls: Entry[] = (['read', 'receipt', 'recall', 'group', 'tick', 'edit', 'delete', 'clear'] as const).map((kind) =>
      entry({ kind, from: 'alice', mentions: [OWNER] }),
    );
    expect(notifyItemsOf(OWNER, controls)).toEqual([]);
  });

  it('an @all or an @-mention copy of a huge group counts as a mention; a mention of someone else does not', () => {
    const all = entry({ conv: { type: 'group', id: 'huge' }, mentions: ['@all'] });
    const other = entry({ conv: { type: 'group', id: 'huge' }, mentions: ['dave'] });
    expect(notifyItemsOf(OWNER, [all, other]).map((i) => i.mention)).toEqual([true, false]);
  });

  it('previews only when asked', () => {
    const e = entry({ body: { text: 'hello' } });
    expect(notifyItemsOf(OWNER, [e])[0]).not.toHaveProperty('preview');
    expect(notifyItemsOf(OWNER, [e], { preview: true })[0]?.preview).toBe('hello');
  });
});

describe('notifyPreviewOf', () => {
  it('the first 100 characters of a string text, cut by code point', () => {
    expect(notifyPreviewOf(entry({ body: { text: 'x'.repeat(150) } }))).toBe('x'.repeat(NOTIFY_PREVIEW_MAX_CHARS));
    const emoji = '😀'.repeat(150); // 300 UTF-16 units
    const cut = notifyPreviewOf(entry({ body: { text: emoji } }));
    expect(Array.from(cut ?? '')).toHaveLength(100);
    expect(cut).toBe('😀'.repeat(100));
  });

  it('none for a body without a string text', () => {
    const bodies: Json[] = [null, 'text', 42, ['text'], { text: 5 }, { caption: 'x' }];
    for (const body of bodies) {
      expect(notifyPreviewOf(entry({ body }))).toBeUndefined();
    }
    expect(notifyPreviewOf(entry({ body: undefined }))).toBeUndefined();
  });
});
