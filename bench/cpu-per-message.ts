/**
 * `npm run bench -- cpu`: server CPU per delivered 1:1 message in the embedded server (`npm start`
 * as a child) at a fixed offered rate, open loop, round-robin over sender → recipient pairs (one
 * socket each). CPU is the server process's utime + stime over the measured window and its
 * drain, divided by the messages delivered. Knobs: BENCH_CPU_RATE (msg/s, default 1 000),
 * BENCH_CPU_PAIRS (100), BENCH_CPU_SECONDS (measured window, 10).
 *
 * BENCH_CPU_AGAINST=<dir>: also runs the server of another checkout (<dir>/apps/server/src/main.ts,
 * e.g. the commit before a change) at the same time, under the same load from the same
 * generator. On a shared machine CPU per message moves with the other load (commits batch more
 * when the server is starved), so two servers measured side by side compare; two runs do not.
 *
 * BENCH_CPU_PROFILE_DIR=<dir>: the servers run with `--cpu-prof` into <dir> and the run ends with
 * the top self-time frames of the measured window only (bench/cpu-profile.ts). The profiler
 * costs CPU: compare µs per message between runs without it.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { messageBody, RUN_ID } from './fixtures.ts';
import { formatProfileTop, readProfileTop } from './cpu-profile.ts';
import { fmtLatency, Samples, type BenchResult, type Figure } from './stats.ts';
import { cpuSecondsOf, cpuTimes, mapLimited, sleep, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const RATE = Number(process.env['BENCH_CPU_RATE'] ?? 1000);
const PAIRS = Number(process.env['BENCH_CPU_PAIRS'] ?? 100);
const MEASURE_MS = Number(process.env['BENCH_CPU_SECONDS'] ?? 10) * 1000;
const WARMUP_MS = 2000;
const DRAIN_MS = 10_000;
const TICK_MS = 1;
const AGAINST = process.env['BENCH_CPU_AGAINST'];
const PROFILE_DIR = process.env['BENCH_CPU_PROFILE_DIR'];
/** Rate limits out of the way: this measures delivery, not the token bucket. */
const UNLIMITED = { SEQLINE_RATE_PER_SEC: '1000000', SEQLINE_RATE_BURST: '1000000' };

/** One server under load, and what it delivered in the measured window. */
interface Target {
  label: string;
  server: ChildServer;
  senders: BenchClient[];
  receivers: BenchClient[];
  /** appinfo → when its frame was written; measured messages only. */
  sentAt: Map<string, number>;
  delivery: Samples;
  delivered: number;
  /** Error replies by code. */
  refused: Map<string, number>;
  cpu0: number;
  writes0: number;
}

/** Sends RATE msg/s for `ms`: message i is due at start + i/RATE; each tick sends what is due. */
function openLoop(ms: number, send: (i: number) => void): Promise<number> {
  const total = Math.floor((ms / 1000) * RATE);
  const start = performance.now();
  let sent = 0;
  return new Promise((done) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE) + 1);
      while (sent < due) send(sent++);
      if (sent >= total) done(sent);
      else setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

/**
 * write/writev syscalls a process made (syscw of /proc/<pid>/io): libuv writes a socket so, and
 * LMDB its files; uWS sends with send(2), which this does not count.
 */
async function writeCallsOf(pid: number): Promise<number> {
  const match = /^syscw:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/io`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN);
}

/** Monotonic µs, the clock V8 stamps a CPU profile with. */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

async function startTarget(label: string, dataDir: string, main?: string): Promise<Target> {
  const server = await startSeqlineChild(dataDir, UNLIMITED, main);
  const connect = async (user: string) => BenchClient.connect(server.url, await tokenFor(user));
  const users = (prefix: string) => Array.from({ length: PAIRS }, (_, i) => `${prefix}${i}`);
  const senders = await mapLimited(users('cs'), 50, connect);
  const receivers = await mapLimited(users('cr'), 50, connect);
  const target: Target = {
    label,
    server,
    senders,
    receivers,
    sentAt: new Map(),
    delivery: new Samples(Math.ceil((MEASURE_MS / 1000) * RATE)),
    delivered: 0,
    refused: new Map(),
    cpu0: 0,
    writes0: 0,
  };
  for (const receiver of receivers) {
    receiver.onPush = (frame, at) => {
      for (const entry of frame.entries) {
        const t0 = target.sentAt.get(entry.appinfo);
        if (t0 === undefined) continue;
        target.sentAt.delete(entry.appinfo);
        target.delivered++;
        target.delivery.add(at - t0);
      }
    };
  }
  return target;
}

function sendTo(target: Target, i: number, measured: boolean): void {
  const pair = i % PAIRS;
  const appinfo = `cpu-${RUN_ID}-${measured ? 'm' : 'w'}-${i}`;
  const { sentAt: t0, reply } = (target.senders[pair] as BenchClient).call('send', {
    appinfo,
    to: { user: `cr${pair}` },
    type: 'text',
    body: messageBody(),
  });
  if (!measured) return;
  target.sentAt.set(appinfo, t0);
  reply.then(
    (r) => {
      if (r.reply.ok) return;
      const code = r.reply.error?.code ?? 'UNKNOWN';
      target.refused.set(code, (target.refused.get(code) ?? 0) + 1);
      target.sentAt.delete(appinfo);
    },
    () => {},
  );
}

async function stopTarget(target: Target): Promise<void> {
  await Promise.all([...target.senders, ...target.receivers].map((c) => c.close()));
  target.senders = [];
  target.receivers = [];
  await target.server.stop();
}

export async function runCpuPerMessageBench(): Promise<BenchResult> {
  const tmp = await tempDir('cpu');
  if (PROFILE_DIR !== undefined) {
    await mkdir(PROFILE_DIR, { recursive: true });
    const flags = `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}`;
    process.env['SEQLINE_BENCH_SERVER_NODE_ARGS'] = `${process.env['SEQLINE_BENCH_SERVER_NODE_ARGS'] ?? ''} ${flags}`;
  }
  const targets: Target[] = [];
  try {
    targets.push(await startTarget('this checkout', join(tmp.dir, 'this')));
    if (AGAINST !== undefined) {
      targets.push(await startTarget(`against ${AGAINST}`, join(tmp.dir, 'against'), resolve(AGAINST, 'apps/server/src/main.ts')));
    }
    await openLoop(WARMUP_MS, (i) => targets.forEach((t) => sendTo(t, i, false)));
    await sleep(200); // the warm-up's tail is not billed to the window
    const window0 = monotonicMicros();
    const machine0 = await cpuTimes();
    const own0 = process.cpuUsage();
    for (const t of targets) [t.cpu0, t.writes0] = [await cpuSecondsOf(t.server.pid), await writeCallsOf(t.server.pid)];
    const sent = await openLoop(MEASURE_MS, (i) => targets.forEach((t) => sendTo(t, i, true)));
    const drainUntil = performance.now() + DRAIN_MS;
    while (targets.some((t) => t.sentAt.size > 0) && performance.now() < drainUntil) await sleep(5);
    const cpu = await Promise.all(targets.map(async (t) => (await cpuSecondsOf(t.server.pid)) - t.cpu0));
    const writes = await Promise.all(targets.map(async (t) => (await writeCallsOf(t.server.pid)) - t.writes0));
    const own = process.cpuUsage(own0);
    const machine1 = await cpuTimes();
    const window1 = monotonicMicros();

    const capacity = Math.max(1e-9, (machine1.total - machine0.total) / 100);
    const loadgen = (own.user + own.system) / 1e6;
    const serversCpu = cpu.reduce((a, b) => a + b, 0);
    const others = Math.max(0, (machine1.busy - machine0.busy) / 100 - serversCpu - loadgen);
    const pct = (s: number) => `${Math.round((100 * s) / capacity)}%`;
    const perMessage = targets.map((t, k) => (t.delivered > 0 ? ((cpu[k] ?? 0) * 1e6) / t.delivered : Number.NaN));
    const notes = [
      `${RATE} msg/s offered to each server, ${PAIRS} pairs each, ${MEASURE_MS / 1000} s measured (${sent} messages each)`,
      `share of all cores: servers ${pct(serversCpu)}, load generator ${pct(loadgen)}, other load ${pct(others)}`,
    ];
    const figures: Figure[] = [];
    targets.forEach((t, k) => {
      notes.push(
        `${t.label} (pid ${t.server.pid}): ${t.delivered} delivered, refused ${[...t.refused].map(([code, n]) => `${code}×${n}`).join(', ') || 'none'}, ${t.sentAt.size} missing; CPU ${(cpu[k] ?? 0).toFixed(2)} s = ${(perMessage[k] ?? 0).toFixed(0)} µs per delivered message; ${((writes[k] ?? 0) / Math.max(1, t.delivered)).toFixed(2)} write syscalls per message`,
        `  send → push: ${fmtLatency(t.delivery.summary())}`,
      );
      figures.push({
        name: `server CPU per delivered 1:1 message @ ${RATE} msg/s (${t.label})`,
        value: `${(perMessage[k] ?? 0).toFixed(0)} µs`,
        target: '—',
        met: undefined,
        ...(k > 0 && {
          raw: `${(perMessage[0] ?? 0).toFixed(0)} µs this checkout`,
          ratio: `${((perMessage[0] ?? 0) / (perMessage[k] ?? 1)).toFixed(2)}× (this ÷ against)`,
        }),
      });
    });
    for (const t of targets) await stopTarget(t);
    if (PROFILE_DIR !== undefined) {
      for (const file of (await readdir(PROFILE_DIR)).filter((f) => f.endsWith('.cpuprofile'))) {
        const target = targets.find((t) => file.includes(`.${t.server.pid}.`));
        if (target === undefined) continue;
        const top = await readProfileTop(join(PROFILE_DIR, file), { fromMicros: window0, toMicros: window1 });
        notes.push(`profile of ${target.label}: ${join(PROFILE_DIR, file)}, measured window only:`, ...formatProfileTop(top, 20));
      }
    }
    return { figures, notes };
  } finally {
    for (const t of targets) await stopTarget(t);
    await tmp.remove();
  }
}
