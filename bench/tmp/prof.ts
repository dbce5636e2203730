import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { createLocalPushBus } from '@seqline/bus';
import { inboxKey, silentLogger, type InboxKey } from '@seqline/core';
import { InboxOwner } from '@seqline/seq';
import { openScyllaStores } from '@seqline/store';
import { messageEntry } from '../fixtures.ts';
const cpid = Number(process.env.CPID);
const jiff = () => { const f = readFileSync(`/proc/${cpid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const stores = await openScyllaStores({ contactPoints: ['127.0.0.1:9042'], localDataCenter: 'datacenter1', keyspace: 'seqline_bench_store', migrate: true });
const epoch = await stores.ceilings.nextEpoch('bench-store-owner');
const push = createLocalPushBus({ logger: silentLogger });
const owner = new InboxOwner({ timeline: stores.timeline, ceilings: stores.ceilings, push, logger: silentLogger, epoch });
await owner.start();
const R = Date.now().toString(36);
const inboxes: InboxKey[] = Array.from({ length: 2000 }, (_, i) => inboxKey(`p${R}`, `u${i}`));
let c = 0;
for (const round of [0, 1, 2]) {
  const t0 = performance.now(); const cpu0 = process.cpuUsage(); const j0 = jiff();
  let n = 0; let next = 0; const end = t0 + 4000;
  await Promise.all(Array.from({ length: Number(process.env.C ?? 256) }, async () => { while (performance.now() < end) { await owner.append(inboxes[next++ % 2000]!, [messageEntry(`pp-${R}-${c++}`, 'peer', Date.now())]); n++; } }));
  const ms = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
  console.log(`round ${round}: ${(n / ms * 1000).toFixed(0)}/s node cpu ${((cpu.user + cpu.system) / 1000 / ms * 100).toFixed(0)}% cassandra cpu ${((jiff() - j0) / ms * 100).toFixed(0)}%`);
}
await owner.close(); await push.close(); await stores.close();
