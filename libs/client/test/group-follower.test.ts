import { describe, expect, it } from 'vitest';
import { GroupFollower, type GroupMessage } from '../src/index.ts';
import { silentClientLogger } from '../src/logger.ts';

/** A group stream with gaps in its gseqs (allowed), paged like group.history. */
function stream(gseqs: number[]) {
  const all: GroupMessage[] = gseqs.map((g) => ({
    seq: g,
    gseq: g,
    kind: 'msg',
    appinfo: `m${g}`,
    conv: { type: 'group', id: 'g' },
    from: 'a',
    sendTime: g,
  }));
  const delivered: number[] = [];
  const fetches: number[] = [];
  let cursor = 0;
  const follower = new GroupFollower({
    pageLimit: 2,
    logger: silentClientLogger,
    fetchPage: async (_g, after, limit) => {
      fetches.push(after);
      const rest = all.filter((m) => m.gseq > after);
      return { messages: rest.slice(0, limit), hasMore: rest.length > limit };
    },
    serverCursor: async () => cursor,
    deliver: async (_g, messages) => {
      delivered.push(...messages.map((m) => m.gseq));
    },
  });
  const msgs = (...g: number[]) => all.filter((m) => g.includes(m.gseq));
  return {
    follower,
    delivered,
    fetches,
    msgs,
    setCursor: (c: number) => {
      cursor = c;
    },
  };
}

describe('GroupFollower', () => {
  it('news pages from the cursor to the head, in pages, each message once', async () => {
    const t = stream([3, 5, 9, 10, 14]);
    await t.follower.news({ id: 'g', headGseq: 14, cursor: 3 });
    expect(t.delivered).toEqual([5, 9, 10, 14]);
    await t.follower.news({ id: 'g', headGseq: 14, cursor: 0 }); // nothing new: no refetch from 0
    expect(t.delivered).toEqual([5, 9, 10, 14]);
    expect(t.follower.position('g')).toBe(14);
  });

  it('applies a push that continues the position, ignores a stale one, pages a gap', async () => {
    const t = stream([2, 4, 7, 8, 11]);
    t.setCursor(2);
    expect(await t.follower.push('g', 2, t.msgs(4))).toBe('applied');
    expect(t.fetches).toEqual([]); // position came from the server cursor, no paging needed
    expect(await t.follower.push('g', 2, t.msgs(4))).toBe('stale');
    expect(await t.follower.push('g', 8, t.msgs(11))).toBe('gap'); // 7 and 8 were never pushed
    expect(t.delivered).toEqual([4, 7, 8, 11]);
    expect(await t.follower.push('g', 7, t.msgs(8, 11))).toBe('stale');
  });

  it('concurrent pushes, news and hints still deliver each message once, ascending', async () => {
    const t = stream([1, 2, 3, 4, 5, 6]);
    await Promise.all([
      t.follower.push('g', 3, t.msgs(4)),
      t.follower.hint('g'),
      t.follower.news({ id: 'g', headGseq: 6, cursor: 0 }),
      t.follower.push('g', 0, t.msgs(1, 2)),
      t.follower.push('g', 5, t.msgs(6)),
    ]);
    expect(t.delivered).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
