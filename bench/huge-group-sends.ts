/**
 * Send -> ack latency of one huge (read-fanout) group at rising rates, on the distributed stack
 * (one worker, one gateway): 8 connected members send in turn to a group of 8 + EXTRA members.
 * Not a bench part (no target); run it with the services up:
 *
 *   node --conditions=source --import tsx bench/huge-group-sends.ts                 # RATES=5,10,20,40 EXTRA=2100
 *   RATES=40,80,160,320 node --conditions=source --import tsx bench/huge-group-sends.ts
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>" ...       # profiles of the children
 */
import { performance } from 'node:perf_hooks';
import { startDistributedStack } from './distributed-stack.ts';
import { sleep } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const stack = await startDistributedStack();
try {
  const run = Math.random().toString(36).slice(2, 7);
  const users = Array.from({ length: 8 }, (_, i) => `hr${run}u${i}`);
  const clients = await Promise.all(users.map(async (u) => BenchClient.connect(stack.gatewayUrl, await tokenFor(u))));
  const first = clients[0]!;
  let streamPushed = 0;
  let lastPushAt = 0;
  for (const c of clients)
    c.onGroupPush = (messages) => {
      streamPushed += messages;
      lastPushAt = performance.now();
    };
  for (;;) {
    const r = await first.call('send', { appinfo: `warm-${run}-${Date.now()}`, to: { user: users[1] }, type: 'text', body: {} }).reply;
    if (r.reply.ok) break;
    await sleep(500);
  }
  const members = [...users, ...Array.from({ length: Number(process.env.EXTRA ?? 2100) }, (_, i) => `hr${run}m${i}`)];
  const { reply } = await first.ok('group.create', { name: 'huge', members });
  const group = String((reply as { group?: unknown }).group);
  console.log('group', group, (reply as { tier?: unknown }).tier);
  let k = 0;
  for (const rate of (process.env.RATES ?? '5,10,20,40').split(',').map(Number)) {
    const lat: number[] = [];
    const fails = new Map<string, number>();
    const fail = (code: string) => fails.set(code, (fails.get(code) ?? 0) + 1);
    const pend: Promise<unknown>[] = [];
    const pushedBefore = streamPushed;
    const t0 = performance.now();
    for (let i = 0; i < rate * 5; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const c = clients[k++ % clients.length]!;
      const s = performance.now();
      pend.push(
        c.call('send', { appinfo: `hr-${run}-${k}`, to: { group }, type: 'text', body: { text: 'x' } }).reply.then(
          (r) => {
            if (r.reply.ok) lat.push(performance.now() - s);
            else fail(r.reply.error?.code ?? 'UNKNOWN');
          },
          () => fail('NO_ANSWER'),
        ),
      );
    }
    await Promise.all(pend);
    // The last pushes: until all arrived, or none came for 2 s (a push is at most once).
    const expected = lat.length * clients.length;
    let last = -1;
    let quietSince = performance.now();
    while (streamPushed - pushedBefore < expected && performance.now() - quietSince < 2_000) {
      if (streamPushed !== last) {
        last = streamPushed;
        quietSince = performance.now();
      }
      await sleep(50);
    }
    const drainMs = lastPushAt - (t0 + ((rate * 5 - 1) * 1000) / rate);
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]?.toFixed(1);
    // Every online member, the sender included, gets each message once by group.push.
    const pushed = streamPushed - pushedBefore;
    console.log(
      `rate ${rate}/s: n=${lat.length} fails=${JSON.stringify(Object.fromEntries(fails))} ack p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)} ms; ` +
        `group.push messages ${pushed} of ${expected}, the last ${drainMs.toFixed(0)} ms after the last send was due`,
    );
  }
  for (const c of clients) void c.close();
} finally {
  await stack.stop();
}
