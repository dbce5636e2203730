// Worker thread of bench/write-journal.ts (TypeScript support is registered here: a worker does
// not inherit the parent's --import hooks): appends 1:1 messages to 1 000 inboxes, 64 in
// flight, on an engine opened in this thread with its writes journaled or not; after a warm-up,
// answers the appends and the thread's busy time over `ms`.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { inboxKey } = await import('@seqline/core');
const { openEmbeddedEngine } = await import('@seqline/store');

const { dir, journalWrites, ms, warmupMs } = workerData;
const engine = await openEmbeddedEngine({ dir, startupChores: false, journalWrites });
const heads = new Map();
let next = 0;

async function append() {
  const i = next++;
  const inbox = inboxKey('bench', `u${i % 1000}`);
  const seq = (heads.get(inbox) ?? 0) + 1;
  heads.set(inbox, seq);
  const peer = `p${Math.floor(i / 1000) % 10}`;
  const entry = {
    seq,
    kind: 'msg',
    appinfo: `wj-${i}`,
    conv: { type: 'user', id: peer },
    from: peer,
    sendTime: Date.now(),
    type: 'text',
    body: { text: 'a message of about sixty bytes, as a chat line tends to be' },
  };
  await engine.timeline.append({ inbox, entries: [entry] });
}

async function loop(untilMs) {
  let ops = 0;
  // 64 lanes over 1 000 inboxes: an inbox's appends are queued in the order of their seqs.
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < untilMs) {
        await append();
        ops++;
      }
    }),
  );
  return ops;
}

await loop(performance.now() + warmupMs);
const elu = performance.eventLoopUtilization();
const start = performance.now();
const ops = await loop(start + ms);
const wallMs = performance.now() - start;
const busyMs = performance.eventLoopUtilization(elu).active;
await engine.close();
parentPort.postMessage({ ops, wallMs, busyMs });
