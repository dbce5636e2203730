/**
 * Bench: another user's `sync` p99 while four sockets flood 64 KB malformed frames (19 bad, 1
 * valid, reconnecting when cut off), against its unloaded p99 in the same run — the server as
 * `npm start` in a child process, the flood in a process of its own. Target ≤ 2× (the hostile
 * suite asserts it; here it is a figure). The raw reference is the unloaded p99 itself.
 */
import { compareUnderFlood } from '../apps/gateway/test/support/sync-latency.ts';
import { messageBody, RUN_ID } from './fixtures.ts';
import { fmtMs, type BenchResult } from './stats.ts';
import { startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const TARGET_RATIO = 2;

export async function runBadFrameFloodBench(): Promise<BenchResult> {
  const tmp = await tempDir('flood');
  let server: ChildServer | undefined;
  try {
    // The production rate limits (the defaults), not a bench's unlimited ones.
    server = await startSeqlineChild(tmp.dir);
    const victim = await BenchClient.connect(server.url, await tokenFor('victim'));
    const friend = await BenchClient.connect(server.url, await tokenFor('friend'));
    for (let i = 0; i < 30; i++) {
      const r = await friend.call('send', { appinfo: `fl-${RUN_ID}-${i}`, to: { user: 'victim' }, type: 'text', body: messageBody() })
        .reply;
      if (!r.reply.ok) throw new Error(`prefill send failed: ${r.reply.error?.code}`);
    }
    const tokens = await Promise.all(['m1', 'm2', 'm3', 'm4'].map((u) => tokenFor(u)));
    const r = await compareUnderFlood(async () => (await victim.call('sync', { maxSeq: 0, limit: 30 }).reply).reply.ok === true, {
      url: server.url,
      tokens,
    });
    await victim.close();
    await friend.close();
    return {
      figures: [
        {
          name: 'sync p99 under a bad-frame flood (embedded)',
          value: `${r.ratio.toFixed(2)}× unloaded`,
          target: `≤ ${TARGET_RATIO}×`,
          met: r.ratio <= TARGET_RATIO,
          raw: `unloaded p99 ${fmtMs(r.unloaded.p99)}`,
          ratio: `flooded p99 ${fmtMs(r.flooded.p99)}`,
        },
      ],
      notes: [
        `unloaded: ${r.unloaded.n} syncs, p50 ${fmtMs(r.unloaded.p50)}, p99 ${fmtMs(r.unloaded.p99)}; flooded: ${r.flooded.n}, p50 ${fmtMs(r.flooded.p50)}, p99 ${fmtMs(r.flooded.p99)}`,
        `flood: ${JSON.stringify(r.flood)}`,
      ],
    };
  } finally {
    await server?.stop();
    await tmp.remove();
  }
}
