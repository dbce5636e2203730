/**
 * The cost of one offline notification's badge for a user in many huge (read-fanout) groups, on
 * the embedded LMDB engine: one offline user in GROUPS groups whose streams hold ROWS unread
 * rows each. "Now" is the badge the notification job computes (`unreadBadge`: each group's
 * stream walked at most BADGE_STREAM_ROWS rows); "raw" is the badge as it was computed before,
 * the `conversations` op summed over its pages, which walks up to 2 000 rows a group. Both read
 * through counting stores: store calls and rows per badge, and wall time (median of ROUNDS,
 * alternating). `npm run bench -- notify-badge`.
 */
import { performance } from 'node:perf_hooks';
import { createLocalPushBus, createLocalWorkQueue } from '@seqline/bus';
import { CONVERSATIONS_MAX_LIMIT, DEFAULT_LIMITS, groupKey, resolveHooks, silentLogger, type NewEntry } from '@seqline/core';
import { createHttpHookTransport } from '@seqline/hooks';
import { BADGE_MAX_PAGES, BADGE_STREAM_ROWS, createMessaging, startWorkers, unreadBadge, type MessagingDeps } from '@seqline/messaging';
import { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { CountingStores, totalCount } from '@seqline/testing';
import { fmtMs, median, type BenchResult } from './stats.ts';
import { sleep, tempDir } from './support.ts';

const GROUPS = 50;
const ROWS = 2_100;
const ROUNDS = 7;
const TENANT = 'nb';
const USER = 'bob';
/** Small tiers: five members make a group huge. */
const TIERS = { smallBelow: 3, largeBelow: 5, maxMembers: 100, hysteresis: 0 };

interface Measured {
  ms: number;
  calls: number;
  rows: number;
  badge: number;
}

export async function runNotifyBadgeBench(): Promise<BenchResult> {
  const temp = await tempDir('notify-badge');
  const engine = await openEmbeddedEngine({ dir: temp.dir });
  const push = createLocalPushBus();
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger });
  const owner = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    conversations: engine.conversations,
    push,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('inbox-owner'),
  });
  const groupStream = new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger: silentLogger,
    epoch: await engine.ceilings.nextEpoch('group-writer'),
  });
  const stores = {
    timeline: engine.timeline,
    groups: engine.groups,
    groupStreams: engine.groupStreams,
    conversations: engine.conversations,
  };
  let ids = 0;
  const deps: MessagingDeps = {
    stores,
    writers: { inbox: owner, groupStream },
    queue,
    push,
    policy: { tiers: () => TIERS, limits: () => DEFAULT_LIMITS, readFanout: true },
    env: { logger: silentLogger, clock: { now: () => Date.now() }, newId: () => `id${++ids}` },
    hooks: { of: () => resolveHooks({}, {}), transport: createHttpHookTransport() },
  };
  const messaging = createMessaging(deps);
  // The workers deliver the groups' creation notices (they make the conversations in bob's list).
  const workers = await startWorkers(deps, { pokeMs: 20 });
  try {
    const caller = { tenant: TENANT, user: USER };
    for (let g = 0; g < GROUPS; g++) {
      const { id } = await messaging.createGroup(
        { tenant: TENANT, user: 'alice' },
        { name: `g${g}`, members: [USER, 'carol', 'dave', 'erin'] },
      );
      for (let done = 0; done < ROWS; done += 500) {
        const batch: NewEntry[] = Array.from({ length: Math.min(500, ROWS - done) }, (_, i) => ({
          kind: 'msg',
          appinfo: `g${g}m${done + i}`,
          conv: { type: 'group', id },
          from: 'alice',
          sendTime: Date.now(),
          type: 'text',
          body: { text: 'hello there' },
        }));
        await groupStream.append({ group: groupKey(TENANT, id), entries: batch });
      }
    }
    for (let tries = 0; ; tries++) {
      const listed = await messaging.conversations(caller, { limit: CONVERSATIONS_MAX_LIMIT, lastMessages: 0 });
      if (listed.convs.length === GROUPS) break;
      if (tries === 600) throw new Error(`bob is in ${listed.convs.length} of ${GROUPS} groups' lists after 60 s`);
      await sleep(100);
    }
    const counting = new CountingStores();
    const counted = { stores: counting.wrap(stores) };
    const measure = async (badgeOf: () => Promise<number>): Promise<Measured> => {
      counting.reset(TENANT);
      const t0 = performance.now();
      const badge = await badgeOf();
      const ms = performance.now() - t0;
      const reads = counting.of(TENANT);
      return { ms, calls: totalCount(reads.calls), rows: totalCount(reads.rows), badge };
    };
    // The badge before: the `conversations` op's unread, summed over its pages.
    const before = async (): Promise<number> => {
      const listing = createMessaging({ ...deps, ...counted });
      let badge = 0;
      let beforeLastSeq: number | undefined;
      for (let page = 0; page < BADGE_MAX_PAGES; page++) {
        const listed = await listing.conversations(caller, {
          limit: CONVERSATIONS_MAX_LIMIT,
          lastMessages: 0,
          ...(beforeLastSeq !== undefined && { beforeLastSeq }),
        });
        for (const { state } of listed.convs) badge += state.unread;
        const last = listed.convs.at(-1);
        if (!listed.hasMore || last === undefined) break;
        beforeLastSeq = last.state.lastSeq;
      }
      return badge;
    };
    const now = async (): Promise<number> => (await unreadBadge(counted, TENANT, USER)).badge;

    await measure(before); // warm-up: both read the same pages once
    await measure(now);
    const runs = { before: [] as Measured[], now: [] as Measured[] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.before.push(await measure(before));
      runs.now.push(await measure(now));
    }
    const ms = { before: median(runs.before.map((m) => m.ms)), now: median(runs.now.map((m) => m.ms)) };
    const last = { before: runs.before.at(-1)!, now: runs.now.at(-1)! };
    const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}× fewer`;
    return {
      figures: [
        {
          name: `offline badge, ${GROUPS} huge groups × ${ROWS} unread: time`,
          value: fmtMs(ms.now),
          target: 'info',
          met: undefined,
          raw: `${fmtMs(ms.before)} before`,
          ratio: `${(ms.before / ms.now).toFixed(1)}× faster`,
        },
        {
          name: `offline badge, ${GROUPS} huge groups × ${ROWS} unread: stream rows read`,
          value: String(last.now.rows),
          target: `≤ ${GROUPS * BADGE_STREAM_ROWS}`,
          met: last.now.rows <= GROUPS * BADGE_STREAM_ROWS,
          raw: `${last.before.rows} before`,
          ratio: ratio(last.before.rows, last.now.rows),
        },
        {
          name: `offline badge, ${GROUPS} huge groups × ${ROWS} unread: store calls`,
          value: String(last.now.calls),
          target: 'info',
          met: undefined,
          raw: `${last.before.calls} before`,
          ratio: ratio(last.before.calls, last.now.calls),
        },
      ],
      notes: [
        `one user in ${GROUPS} huge groups, ${ROWS} rows from others above the cursor in each; median of ${ROUNDS} badges each way, alternating`,
        `badge now ${last.now.badge} (capped: ${BADGE_STREAM_ROWS} rows a group), before ${last.before.badge} (the conversations op's bound: 2 000 rows a group)`,
        `times now: ${runs.now.map((m) => m.ms.toFixed(1)).join(', ')} ms; before: ${runs.before.map((m) => m.ms.toFixed(1)).join(', ')} ms`,
      ],
    };
  } finally {
    workers.stop();
    await queue.close();
    await groupStream.close();
    await owner.close();
    await engine.close();
    await temp.remove();
  }
}
