/**
 * The cost of offline notifications on an append (issue #27): durable single-entry appends/s
 * through one InboxOwner on the embedded LMDB engine, to inboxes of users with no socket, for a
 * tenant with a notifyUrl (windows opened and closed, one durable job per window) and one
 * without, alternating in the same run so both see the same disk and warm-up.
 * `npm run bench -- offline-notify`. Raw limit: the same appends with no notify URL.
 */
import { performance } from 'node:perf_hooks';
import { createLocalPushBus, createLocalWorkQueue } from '@seqline/bus';
import { inboxKey, resolveHooks, silentLogger, type InboxKey, type NewEntry } from '@seqline/core';
import { OfflineNotifier } from '@seqline/messaging';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { fmtRate, type BenchResult } from './stats.ts';
import { tempDir } from './support.ts';

const INBOXES = 2_000;
const IN_FLIGHT = 256;
const PHASE_MS = 3_000;
const ROUNDS = 3;
const WINDOW_MS = 1_000;

export async function runOfflineNotifyBench(): Promise<BenchResult> {
  const temp = await tempDir('offline-notify');
  const engine = await openEmbeddedEngine({ dir: temp.dir });
  const push = createLocalPushBus();
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger });
  const hooks = (tenant: string) =>
    resolveHooks({}, tenant === 'with' ? { notifyUrl: 'http://127.0.0.1:9/notify', notifyWindowMs: WINDOW_MS } : {});
  const notifier = new OfflineNotifier({ queue, hooks: { of: hooks }, presence: push, logger: silentLogger });
  const owner = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    conversations: engine.conversations,
    push,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
    onAppended: notifier.listener,
  });
  let n = 0;
  const entry = (): NewEntry => ({
    kind: 'msg',
    appinfo: `b${++n}`,
    conv: { type: 'user', id: 'alice' },
    from: 'alice',
    sendTime: Date.now(),
    type: 'text',
    body: { text: 'hello there' },
  });

  async function phase(tenant: string): Promise<number> {
    const inboxes: InboxKey[] = Array.from({ length: INBOXES }, (_, i) => inboxKey(tenant, `u${i}`));
    const deadline = performance.now() + PHASE_MS;
    let ops = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, lane) => {
        for (let i = lane; performance.now() < deadline; i += IN_FLIGHT) {
          await owner.append({ inbox: inboxes[i % INBOXES]!, entries: [entry()] });
          ops++;
        }
      }),
    );
    return ops / ((performance.now() - start) / 1000);
  }

  await phase('warm');
  const rates = { with: [] as number[], without: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    rates.without.push(await phase('without'));
    rates.with.push(await phase('with'));
  }
  await notifier.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const withUrl = median(rates.with);
  const withoutUrl = median(rates.without);
  const stats = notifier.stats();
  const jobs = (await engine.jobs.list({ queue: 'hooks.notify' })).length;
  await queue.close();
  await owner.close();
  await engine.close();
  await temp.remove();
  return {
    figures: [
      {
        name: 'appends/s to offline users, notify URL set',
        value: fmtRate(withUrl),
        target: 'info',
        met: undefined,
        raw: `${fmtRate(withoutUrl)} without`,
        ratio: `${(withUrl / withoutUrl).toFixed(2)}× raw`,
      },
    ],
    notes: [
      `${INBOXES} offline inboxes, ${IN_FLIGHT} single-entry appends in flight, ${PHASE_MS / 1000} s phases alternating, median of ${ROUNDS}; window ${WINDOW_MS} ms`,
      `rounds with: ${rates.with.map((r) => Math.round(r)).join(', ')}; without: ${rates.without.map((r) => Math.round(r)).join(', ')}`,
      `notifier: ${JSON.stringify(stats)}; notify jobs enqueued (pending, the URL is unreachable): ${jobs}`,
    ],
  };
}
