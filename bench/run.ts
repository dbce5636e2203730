/**
 * `npm run bench [-- name …]`: runs every bench (or the named ones) one after the other and
 * prints a table of figures with their targets and the raw limit measured in the same run.
 * Figures are reports, not assertions: a missed target does not fail the run; a bench that
 * cannot run at all does (exit code 1).
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { FIGURE_HEADER, figureRows, formatTable, type BenchResult, type Figure } from './stats.ts';
import { cpuTimes, ownCpuSeconds } from './support.ts';

interface BenchSpec {
  name: string;
  aliases: string[];
  what: string;
  run: () => Promise<BenchResult>;
  /** Left out of a run with no names (it takes tens of minutes): runs only when named. */
  onlyWhenNamed?: boolean;
}

const BENCHES: BenchSpec[] = [
  {
    name: 'append',
    aliases: [],
    what: 'appends/s through InboxOwner on LMDB',
    run: async () => (await import('./append.ts')).runAppendBench(),
  },
  {
    name: 'write-journal',
    aliases: ['journal', 'torn-writes'],
    what: "appends/s in a worker thread with its transactions journaled (a thread's end cannot tear them) vs without",
    run: async () => (await import('./write-journal.ts')).runWriteJournalBench(),
  },
  { name: 'seq', aliases: ['alloc'], what: 'seq allocations/s in memory', run: async () => (await import('./seq.ts')).runSeqBench() },
  { name: 'sync', aliases: [], what: 'sync of 200 entries over WebSocket', run: async () => (await import('./sync.ts')).runSyncBench() },
  {
    name: 'push',
    aliases: ['push-latency', 'latency'],
    what: '1:1 send → push latency at a fixed offered load',
    run: async () => (await import('./push-latency.ts')).runPushLatencyBench(),
  },
  {
    name: 'cpu',
    aliases: ['cpu-per-message', 'profile'],
    what: 'server CPU per delivered 1:1 message at a fixed offered load (BENCH_CPU_PROFILE_DIR: with its top self-time frames)',
    run: async () => (await import('./cpu-per-message.ts')).runCpuPerMessageBench(),
  },
  {
    name: 'connections',
    aliases: ['conn', 'rss'],
    what: 'RSS per idle WebSocket',
    run: async () => (await import('./connections.ts')).runConnectionsBench(),
  },
  {
    name: 'soak',
    aliases: ['million-users'],
    what: 'server RSS over 1 000 000 distinct users (connect, one 1:1 send, sync, close; BENCH_SOAK_USERS): flat after warm-up?',
    run: async () => (await import('./soak.ts')).runSoakBench(),
    onlyWhenNamed: true,
  },
  {
    name: 'distributed',
    aliases: ['dist'],
    what: 'CQL append rate, send → push and sync through worker + gateway (Cassandra, Redis, NATS)',
    run: async () => (await import('./distributed.ts')).runDistributedBench(),
  },
  {
    name: 'handover',
    aliases: ['rolling-restart', 'readyz'],
    what: 'fresh deployment to first acknowledged send; longest send stall and losses in a rolling restart of 2 workers under 500 msg/s',
    run: async () => (await import('./handover.ts')).runHandoverBench(),
  },
  {
    name: 'conversations-distributed',
    aliases: ['convs-dist'],
    what: 'CQL appends with the conversation index vs without; list and bootstrap of a 10 000-conversation inbox (Cassandra)',
    run: async () => (await import('./conversations-distributed.ts')).runConversationsDistributedBench(),
  },
  {
    name: 'threads',
    aliases: ['threads-max-rate'],
    what: 'embedded max 1:1 rate (delivery p99 under the peers limit) with SEQLINE_THREADS=1 and =2 in the same run, and their ratio',
    run: async () => (await import('./threads.ts')).runThreadsBench(),
    onlyWhenNamed: true,
  },
  {
    name: 'transports',
    aliases: ['uws', 'ws'],
    what: 'sync of 200 entries on native uWebSockets.js against the ws package',
    run: async () => (await import('./transports.ts')).runTransportsBench(),
  },
  {
    name: 'flood',
    aliases: ['bad-frames'],
    what: "another user's sync p99 under a bad-frame flood, against unloaded",
    run: async () => (await import('./bad-frame-flood.ts')).runBadFrameFloodBench(),
  },
  {
    name: 'large-groups',
    aliases: ['groups'],
    what: 'write-fanout of 2 000 members, read-fanout to 10 000, writes per huge-group message',
    run: async () => (await import('./large-groups.ts')).runLargeGroupsBench(),
  },
  {
    name: 'conversations',
    aliases: ['convs'],
    what: 'LMDB conversation index: appends with it vs without, conversations p99 and bootstrap vs replay on 10k convs / 1M entries',
    run: async () => (await import('./conversations.ts')).runConversationsBench(),
  },
  {
    name: 'rebuild-stall',
    aliases: ['rebuild'],
    what: "other users' send p99 while a 1 000 000-entry inbox's conversation index is rebuilt on LMDB, against unloaded",
    run: async () => (await import('./rebuild-stall.ts')).runRebuildStallBench(),
  },
  {
    name: 'hooks',
    aliases: [],
    what: 'send with a before-send hook and with every hook (after-send, offline notify) against none, and a raw signed POST',
    run: async () => (await import('./hooks.ts')).runHooksBench(),
  },
  {
    name: 'offline-notify',
    aliases: ['notify'],
    what: 'LMDB appends to offline users with a notify URL (coalescing windows, durable jobs) against without',
    run: async () => (await import('./offline-notify.ts')).runOfflineNotifyBench(),
  },
  {
    name: 'notify-badge',
    aliases: ['badge'],
    what: "one offline notification's badge for a user in 50 huge groups of 2 100 unread rows: reads and time, against the badge before (the conversations op)",
    run: async () => (await import('./notify-badge.ts')).runNotifyBadgeBench(),
  },
  {
    name: 'peers',
    aliases: ['centrifugo'],
    what: 'against Centrifugo (Redis and memory engines): 1:1 delivery and highest rate, catch-up, group delivery, CPU per message, RSS per idle socket',
    run: async () => (await import('./peers.ts')).runPeersBench(),
  },
];

function select(args: string[]): BenchSpec[] {
  if (args.length === 0) return BENCHES.filter((b) => b.onlyWhenNamed !== true);
  return args.map((arg) => {
    const spec = BENCHES.find((b) => b.name === arg || b.aliases.includes(arg));
    if (!spec) {
      process.stderr.write(`unknown bench "${arg}"; choose from: ${BENCHES.map((b) => b.name).join(', ')}\n`);
      process.exit(2);
    }
    return spec;
  });
}

function machine(): string {
  const model = cpus()[0]?.model ?? 'unknown cpu';
  return `${availableParallelism()} cpu (${model}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, node ${process.version}, ${process.platform}-${process.arch}`;
}

function pct(part: number, whole: number): string {
  return `${Math.round((100 * part) / whole)}%`;
}

async function main(): Promise<void> {
  const chosen = select(process.argv.slice(2));
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out(`seqline bench — ${machine()}`);
  const load = loadavg()[0] ?? 0;
  if (load > availableParallelism() / 2) {
    out(
      `warning: load average ${load.toFixed(1)} before starting — other processes compete for the CPUs and the disk; figures will be pessimistic`,
    );
  }
  const figures: Figure[] = [];
  const failed: string[] = [];
  const contention: string[] = [];
  const started = performance.now();
  for (const bench of chosen) {
    out();
    out(`== ${bench.name}: ${bench.what}`);
    const t0 = performance.now();
    const load0 = loadavg()[0] ?? 0;
    const cpu0 = await cpuTimes();
    const own0 = ownCpuSeconds();
    try {
      const result = await bench.run();
      for (const note of result.notes) out(`   ${note}`);
      out(formatTable(FIGURE_HEADER, figureRows(result.figures)).replace(/^/gm, '   '));
      figures.push(...result.figures);
    } catch (err) {
      failed.push(bench.name);
      out(`   FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    const cpu1 = await cpuTimes();
    // Benches share the machine with whatever else runs: say how much CPU others took meanwhile.
    const capacity = Math.max(1e-9, (cpu1.total - cpu0.total) / 100); // CPU-seconds available (USER_HZ 100)
    const busy = (cpu1.busy - cpu0.busy) / 100;
    const own = ownCpuSeconds() - own0;
    const others = Math.max(0, busy - own);
    contention.push(`${bench.name} ${pct(others, capacity)}`);
    out(
      `   (${((performance.now() - t0) / 1000).toFixed(1)} s; CPU of all cores: bench ${pct(own, capacity)}, other processes ${pct(others, capacity)}; load avg ${load0.toFixed(1)} → ${(loadavg()[0] ?? 0).toFixed(1)})`,
    );
  }
  out();
  out(`== summary (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  out(formatTable(FIGURE_HEADER, figureRows(figures)));
  out(`share of all cores used by other processes during: ${contention.join(', ')}`);
  if (failed.length > 0) out(`benches that could not run: ${failed.join(', ')}`);
  // Native handles (LMDB threads, sockets of a failed bench) must not keep a finished run alive.
  process.exit(failed.length > 0 ? 1 : 0);
}

// Exit through process.exit so support.ts's exit hook kills the server children.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
