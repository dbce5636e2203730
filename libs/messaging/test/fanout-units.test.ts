import { describe, expect, it } from 'vitest';
import type {
  AppendOutcome,
  ChainedAppend,
  Entry,
  InboxAppend,
  InboxAppendThen,
  InboxKey,
  InboxWriter,
  Membership,
  NewEntry,
} from '@seqline/core';
import { runsOf, visibleRuns } from '../src/group-notify.ts';
import type { FanoutJob, NotifyJob } from '../src/queues.ts';
import { runMergedFanout } from '../src/write-fanout.ts';

/** InboxWriter double: records each append call. */
class RecordingWriter implements InboxWriter {
  readonly calls: Array<{ inbox: InboxKey; appinfos: string[]; convs: string[] }> = [];
  async append({ inbox, entries }: InboxAppend): Promise<AppendOutcome[]> {
    this.calls.push({ inbox, appinfos: entries.map((e) => e.appinfo), convs: entries.map((e) => e.conv.id) });
    return entries.map((_, i) => ({ seq: i + 1, duplicate: false }));
  }
  async appendThen({ inbox, entries, next }: InboxAppendThen): Promise<ChainedAppend> {
    const outcomes = await this.append({ inbox, entries });
    await this.append(next);
    return { outcomes, next: 'appended' };
  }
  async addReceipt(): Promise<void> {}
  async headSeq(): Promise<number> {
    return 0;
  }
  rebuildConversations(): ReturnType<InboxWriter['rebuildConversations']> {
    throw new Error('no conversation index in this double');
  }
  async close(): Promise<void> {}
}

const msg = (appinfo: string, conv: NewEntry['conv'] = { type: 'group', id: 'g' }, from = 'alice'): NewEntry => ({
  kind: 'msg',
  appinfo,
  conv,
  from,
  sendTime: 1,
  type: 'text',
  body: {},
});

describe('merged write-fanout', () => {
  it('gives each recipient one append with exactly the jobs naming it, in job order', async () => {
    const w = new RecordingWriter();
    const jobs: FanoutJob[] = [
      { tenant: 't', groupKey: 't:g', entry: msg('m1'), recipients: ['b', 'c'] },
      { tenant: 't', groupKey: 't:g', entry: msg('m2'), recipients: ['b', 'c', 'd'] }, // d joined in between
      { tenant: 't', groupKey: 't:g', entry: msg('m3'), recipients: ['c', 'd'] }, // b left
    ];
    const counters = { appends: 0, entries: 0 };
    await runMergedFanout(w, jobs, 8, counters);
    const byInbox = Object.fromEntries(w.calls.map((c) => [c.inbox, c.appinfos]));
    expect(byInbox).toEqual({ 't:b': ['m1', 'm2'], 't:c': ['m1', 'm2', 'm3'], 't:d': ['m2', 'm3'] });
    expect(counters).toEqual({ appends: 3, entries: 7 });
  });

  it('1:1: the recipient copy names the sender as the other party', async () => {
    const w = new RecordingWriter();
    await runMergedFanout(w, [{ tenant: 't', entry: msg('d1', { type: 'user', id: 'bob' }, 'alice'), recipients: ['bob'] }], 1);
    expect(w.calls).toEqual([{ inbox: 't:bob', appinfos: ['d1'], convs: ['alice'] }]);
  });
});

describe('group push runs', () => {
  const entry = (seq: number): Entry => ({ ...msg(`m${seq}`), seq });
  const job = (seq: number, prevGseq: number): NotifyJob => ({ tenant: 't', groupKey: 't:g', group: 'g', entry: entry(seq), prevGseq });

  it('merges consecutive gseqs into one push and splits where another message is in between', () => {
    const runs = runsOf([job(12, 11), job(11, 7), job(20, 15), job(11, 7)]);
    expect(runs.map((r) => ({ prev: r.prev, gseqs: r.entries.map((e) => e.seq) }))).toEqual([
      { prev: 7, gseqs: [11, 12] },
      { prev: 15, gseqs: [20] },
    ]);
  });

  it('pushes a member only what its windows allow, with the right prev', () => {
    const run = { prev: 7, entries: [entry(11), entry(12), entry(13)] };
    const joinedAt11: Membership = { user: 'd', windows: [{ joinedAt: 0, fromGseq: 11 }] };
    expect(visibleRuns(joinedAt11, run)).toEqual([{ prev: 11, entries: [entry(12), entry(13)] }]);
    const leftAt12: Membership = { user: 'e', windows: [{ joinedAt: 0, fromGseq: 0, removedAt: 1, toGseq: 12 }] };
    expect(visibleRuns(leftAt12, run)).toEqual([{ prev: 7, entries: [entry(11), entry(12)] }]);
    expect(visibleRuns(null, run)).toEqual([]);
  });
});
