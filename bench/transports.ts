/**
 * Bench: the two gateway transports on the same work — sequential `sync` of 200 entries against
 * the embedded server (`npm start` in a child process) once on native uWebSockets.js and once on
 * the `ws` package, blocks alternating. Where no uWS binary loads for this Node (22, 24), only
 * `ws` is measured and said so. The ratio is ws against uws in the same run.
 */
import { loadNativeUws } from '@seqline/gateway';
import { fmtLatency, fmtMs, fmtRatio, Samples, type BenchResult } from './stats.ts';
import { startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { INBOX_ENTRIES, PAGE, prefill, roundTrips, USER } from './sync.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const WARMUP = 300;
const ITERATIONS = 4000;
const BLOCK = 500;
type Name = 'uws' | 'ws';

export async function runTransportsBench(): Promise<BenchResult> {
  const uws = loadNativeUws();
  const names: Name[] = uws.ok ? ['uws', 'ws'] : ['ws'];
  const notes = uws.ok ? [] : [`no native uWebSockets.js binary for Node ${process.version} (${uws.reason}): ws only`];
  const servers: ChildServer[] = [];
  const dirs: Array<{ remove(): Promise<void> }> = [];
  try {
    const clients = new Map<Name, BenchClient>();
    const samples = new Map<Name, Samples>();
    for (const name of names) {
      const tmp = await tempDir(`transport-${name}`);
      dirs.push(tmp);
      await prefill(tmp.dir);
      const server = await startSeqlineChild(tmp.dir, {
        SEQLINE_TRANSPORT: name,
        SEQLINE_RATE_PER_SEC: '1000000',
        SEQLINE_RATE_BURST: '1000000',
      });
      servers.push(server);
      clients.set(name, await BenchClient.connect(server.url, await tokenFor(USER)));
      samples.set(name, new Samples(ITERATIONS));
    }
    const args = () => ({ maxSeq: Math.floor(Math.random() * (INBOX_ENTRIES - PAGE)), limit: PAGE });
    for (const name of names) await roundTrips(clients.get(name)!, 'sync', args, WARMUP, new Samples(WARMUP));
    for (let done = 0; done < ITERATIONS; done += BLOCK) {
      for (const name of names) await roundTrips(clients.get(name)!, 'sync', args, BLOCK, samples.get(name)!);
    }
    for (const c of clients.values()) await c.close();
    const summary = new Map(names.map((n) => [n, samples.get(n)!.summary()] as const));
    for (const [n, s] of summary) notes.push(`${n}: ${fmtLatency(s)}`);
    const ws = summary.get('ws')!;
    const native = summary.get('uws');
    return {
      figures: [
        {
          name: `sync ${PAGE} p50 on ws`,
          value: fmtMs(ws.p50),
          target: '—',
          met: undefined,
          ...(native ? { raw: `${fmtMs(native.p50)} on uws`, ratio: fmtRatio(ws.p50, native.p50).replace('raw', 'uws') } : {}),
        },
        {
          name: `sync ${PAGE} p99 on ws`,
          value: fmtMs(ws.p99),
          target: '—',
          met: undefined,
          ...(native ? { raw: `${fmtMs(native.p99)} on uws`, ratio: fmtRatio(ws.p99, native.p99).replace('raw', 'uws') } : {}),
        },
      ],
      notes,
    };
  } finally {
    for (const s of servers) await s.stop();
    for (const d of dirs) await d.remove();
  }
}
