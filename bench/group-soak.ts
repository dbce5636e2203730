/**
 * Group traffic on the distributed stack for minutes, to watch memory rather than latency:
 * 40 connected users in 3 small, 2 large and 1 huge group, 27 group sends a second, the worker's
 * and the gateway's RSS every 10 s, and every send's answer checked. Not a bench part (it makes
 * no figure); run it with the services up:
 *
 *   SOAK_S=180 node --conditions=source --import tsx bench/group-soak.ts
 *   BENCH_NODE_ARGS=--trace-gc BENCH_CHILD_LOG_DIR=/tmp/logs ...   # the children's heap after each GC
 */
import { readFileSync } from 'node:fs';
import { startDistributedStack } from './distributed-stack.ts';
import { sleep } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const SOAK_S = Number(process.env.SOAK_S ?? 180);
/** Sends a second per group: small, small, small, large, large, huge. */
const RATES = [5, 5, 5, 1, 1, 10];
const EXTRA_MEMBERS = [0, 20, 40, 460, 500, 2500];

const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

const stack = await startDistributedStack();
try {
  const run = Math.random().toString(36).slice(2, 7);
  const users = Array.from({ length: 40 }, (_, i) => `soak${run}u${i}`);
  const clients = await Promise.all(users.map(async (u) => BenchClient.connect(stack.gatewayUrl, await tokenFor(u))));
  let pushes = 0;
  for (const c of clients)
    c.onPush = () => {
      pushes++;
    };
  const first = clients[0] as BenchClient;
  // The worker's shards become writable after its lease wait-out.
  for (;;) {
    const r = await first.call('send', { appinfo: `warm-${run}-${Date.now()}`, to: { user: users[1] }, type: 'text', body: {} }).reply;
    if (r.reply.ok) break;
    await sleep(500);
  }
  const groups: string[] = [];
  for (const [g, extra] of EXTRA_MEMBERS.entries()) {
    const members = [...users, ...Array.from({ length: extra }, (_, i) => `soak${run}g${g}m${i}`)];
    const { reply } = await first.ok('group.create', { name: `soak${g}`, members });
    groups.push(String((reply as { group?: unknown }).group));
  }
  let sent = 0;
  let k = 0;
  const errors = new Map<string, number>();
  const fail = (code: string) => errors.set(code, (errors.get(code) ?? 0) + 1);
  const started = Date.now();
  const tick = setInterval(() => {
    groups.forEach((group, g) => {
      for (let i = 0; i < (RATES[g] ?? 0); i++) {
        const c = clients[k++ % clients.length] as BenchClient;
        sent++;
        c.call('send', { appinfo: `soak-${run}-${k}`, to: { group }, type: 'text', body: { text: 'hello group' } }).reply.then(
          (r) => {
            if (!r.reply.ok) fail(r.reply.error?.code ?? 'UNKNOWN');
          },
          () => fail('NO_ANSWER'),
        );
      }
    });
  }, 1000);
  while (Date.now() - started < SOAK_S * 1000) {
    await sleep(10_000);
    console.log(
      `${Math.round((Date.now() - started) / 1000)} s: sent ${sent}, pushes ${pushes}, worker RSS ${rssKb(stack.pids.worker)} kB, gateway RSS ${rssKb(stack.pids.gateway)} kB`,
    );
  }
  clearInterval(tick);
  await sleep(5000);
  console.log(`sent ${sent}, errors ${errors.size === 0 ? 'none' : JSON.stringify(Object.fromEntries(errors))}, pushes ${pushes}`);
  for (const c of clients) await c.close();
} finally {
  await stack.stop();
}
