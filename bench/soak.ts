/**
 * Soak: BENCH_SOAK_USERS distinct users (default 1 000 000) through one embedded server
 * (`npm start` in a child process, with its node flags and --trace-gc). Each user signs its
 * token, connects, sends one 1:1 message to the next user, syncs from 0 (its own copy must be
 * there) and disconnects; CONCURRENCY users at once. Every 1/SAMPLES of the users the run
 * drains, then reads the server's memory (/proc/<pid>/status: VmRSS, RssAnon, RssFile;
 * /metrics: V8 heap used, bound fills). Every full GC's trace line gives the live heap after it.
 *
 * Flat = the least-squares slope of RssAnon over the users after warm-up is under
 * FLAT_SLOPE_PER_100K, and so is the live heap's after full GCs. Before every bound is full,
 * memory grows by design: the bounds an operator sets are set to 10 % of the users (at most their
 * defaults), and the largest fixed per-inbox bound holds 100 000 inboxes (the LMDB conversation
 * index writer's remembered watermarks), filled at 100 000 users. Warm-up is 10 % of the users,
 * and at least WARMUP_FLOOR users when the run is big enough: V8 sizes its heap to the full live
 * set a few GCs after the bounds fill. RssAnon, not VmRSS, decides: VmRSS also counts the LMDB
 * map's file pages the process has touched, which grow with the data on disk and are page cache
 * the kernel takes back (reported beside it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { messageBody, RUN_ID } from './fixtures.ts';
import { fmtBytes, fmtRate, type BenchResult, type Figure } from './stats.ts';
import { procStatus, serverMetrics, slope, watchFullGcs, type FullGc, type MemorySample } from './soak-memory.ts';
import { mapLimited, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const USERS = positiveInt('BENCH_SOAK_USERS', 1_000_000);
const CONCURRENCY = positiveInt('BENCH_SOAK_CONCURRENCY', 128);
const SAMPLES = positiveInt('BENCH_SOAK_SAMPLES', 100);
/** 1.5 × the largest fixed per-inbox bound (100 000 inboxes; one new inbox per user here). */
const WARMUP_FLOOR = 150_000;
const WARMUP_USERS = positiveInt('BENCH_SOAK_WARMUP', Math.max(Math.ceil(USERS / 10), Math.min(WARMUP_FLOOR, Math.floor(USERS / 2))));
/** The bounds an operator sets, filled by 10 % of the users. */
const BOUND_USERS = Math.ceil(USERS / 10);
/** `npm start`'s node flags (package.json), and a line per GC to read the live heap from. */
const SERVER_NODE_ARGS = ['--max-semi-space-size=64', '--trace-gc'];
/** Above this, something is kept per user: 2 MiB per 100 000 users is 21 bytes a user. */
const FLAT_SLOPE_PER_100K = 2 * 1024 * 1024;
const DEFAULT_SEQ_KEYS = 4_000_000;
const DEFAULT_CACHED_INBOXES = 100_000;
/** Users whose failure is kept verbatim in the notes. */
const FAILURES_KEPT = 5;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

const perHundredK = (s: MemorySample[], field: 'vmRss' | 'rssAnon' | 'heapTotal') =>
  slope(s.map((p) => ({ x: p.users, y: p[field] }))) * 100_000;

const userName = (i: number) => `soak${RUN_ID}u${i}`;

/** One user's life: connect, one 1:1 message to the next user, sync from 0, disconnect. */
async function oneUser(url: string, i: number): Promise<void> {
  const client = await BenchClient.connect(url, await tokenFor(userName(i)));
  try {
    const sent = await client.ok('send', { appinfo: `soak-${i}`, to: { user: userName(i + 1) }, type: 'text', body: messageBody() });
    const seq = Number(sent.reply['seq']);
    const synced = await client.ok('sync', { maxSeq: 0, limit: 10 });
    const entries = synced.reply['entries'];
    if (!Array.isArray(entries) || !entries.some((e) => (e as { seq?: unknown }).seq === seq)) {
      throw new Error(`sync from 0 did not return the sent message (seq ${seq})`);
    }
  } finally {
    await client.close();
  }
}

async function sample(server: ChildServer, users: number, startedAt: number): Promise<MemorySample> {
  const [status, metrics] = await Promise.all([procStatus(server.pid), serverMetrics(server.port)]);
  return { users, seconds: (performance.now() - startedAt) / 1000, ...status, ...metrics };
}

function fillsLine(s: MemorySample): string {
  return Object.entries(s.fills)
    .map(([bound, fill]) => `${bound.replace('SEQLINE_MAX_', '')} ${fill}`)
    .join(', ');
}

interface SoakRun {
  samples: MemorySample[];
  gcs: FullGc[];
  seconds: number;
  failed: number;
  failures: Map<string, number>;
  /** The first few failures verbatim. */
  kept: string[];
}

/** Drives USERS users through `server`, CONCURRENCY at once, reading its memory every `every` users. */
async function drive(server: ChildServer, every: number): Promise<SoakRun> {
  let done = 0;
  const gcs = watchFullGcs(server, () => done);
  const startedAt = performance.now();
  const samples: MemorySample[] = [await sample(server, 0, startedAt)];
  const run: SoakRun = { samples, gcs, seconds: 0, failed: 0, failures: new Map(), kept: [] };
  for (let from = 0; from < USERS; from += every) {
    const indexes = Array.from({ length: Math.min(every, USERS - from) }, (_, k) => from + k);
    await mapLimited(indexes, CONCURRENCY, async (i) => {
      try {
        await oneUser(server.url, i);
      } catch (err) {
        run.failed++;
        const message = err instanceof Error ? err.message : String(err);
        const kind = message.replace(/\d+/g, 'N').slice(0, 120);
        run.failures.set(kind, (run.failures.get(kind) ?? 0) + 1);
        if (run.kept.length < FAILURES_KEPT) run.kept.push(`user ${i}: ${message}`);
      }
      done++;
    });
    const s = await sample(server, done, startedAt);
    samples.push(s);
    if (process.env.BENCH_SOAK_PROGRESS === '1') {
      const live = gcs[gcs.length - 1];
      process.stdout.write(
        `   ${s.users} users ${s.seconds.toFixed(0)} s: VmRSS ${fmtBytes(s.vmRss)}, RssAnon ${fmtBytes(s.rssAnon)}, heap used ${fmtBytes(s.heapUsed)} of ${fmtBytes(s.heapTotal)}, external ${fmtBytes(s.external)}, live after last full GC ${live ? fmtBytes(live.liveAfter) : '—'}; ${fillsLine(s)}${run.failed ? `; ${run.failed} failed` : ''}\n`,
      );
    }
    if (run.failed > 1000 && run.failed > done / 10) {
      throw new Error(`more than 10 % of users failed: ${JSON.stringify(Object.fromEntries(run.failures))}`);
    }
  }
  run.seconds = (performance.now() - startedAt) / 1000;
  return run;
}

async function writeCsv(file: string, samples: MemorySample[]): Promise<void> {
  const bounds = Object.keys(samples[samples.length - 1]?.fills ?? {});
  const rows = samples.map((s) =>
    [
      s.users,
      s.seconds.toFixed(1),
      s.vmRss,
      s.rssAnon,
      s.rssFile,
      s.heapUsed,
      s.heapTotal,
      s.external,
      ...bounds.map((b) => s.fills[b] ?? ''),
    ].join(','),
  );
  await writeFile(file, `users,seconds,vm_rss,rss_anon,rss_file,heap_used,heap_total,external,${bounds.join(',')}\n${rows.join('\n')}\n`);
}

function report(run: SoakRun, every: number, bounds: { seqKeys: number; cachedInboxes: number }): BenchResult {
  const { samples, gcs, failed } = run;
  const after = samples.filter((s) => s.users >= WARMUP_USERS);
  const atWarmup = after[0];
  const start = samples[0];
  const end = samples[samples.length - 1];
  if (!atWarmup || !start || !end) throw new Error(`no sample after the warm-up of ${WARMUP_USERS} users`);
  const anonSlope = perHundredK(after, 'rssAnon');
  const vmSlope = perHundredK(after, 'vmRss');
  const committedSlope = perHundredK(after, 'heapTotal');
  const gcsAfter = gcs.filter((g) => g.users >= WARMUP_USERS);
  const liveSlope = slope(gcsAfter.map((g) => ({ x: g.users, y: g.liveAfter }))) * 100_000;
  const liveFirst = gcsAfter[0];
  const liveLast = gcsAfter[gcsAfter.length - 1];
  const notes = [
    `${USERS} distinct users, ${CONCURRENCY} at once, each: sign a token, connect, send one 1:1 message to the next user, sync from 0, close; ${fmtRate(USERS / run.seconds)} users over ${run.seconds.toFixed(0)} s`,
    `server: npm start's node flags + --trace-gc; SEQLINE_MAX_SEQ_KEYS ${bounds.seqKeys}, SEQLINE_MAX_CACHED_INBOXES ${bounds.cachedInboxes} (10 % of the users); warm-up ${WARMUP_USERS} users; memory read every ${every} users once the users in flight finished`,
  ];
  for (const [label, s] of [
    ['start', start],
    ['warm-up', atWarmup],
    ['end', end],
  ] as const) {
    notes.push(
      `${label} (${s.users} users): VmRSS ${fmtBytes(s.vmRss)} = RssAnon ${fmtBytes(s.rssAnon)} + RssFile ${fmtBytes(s.rssFile)} (+ shmem); V8 heap used ${fmtBytes(s.heapUsed)} of ${fmtBytes(s.heapTotal)} committed, external ${fmtBytes(s.external)}; fills: ${fillsLine(s)}`,
    );
  }
  notes.push(
    `after warm-up, least-squares slope per 100 000 users: RssAnon ${fmtBytes(anonSlope)}, VmRSS ${fmtBytes(vmSlope)}, V8 heap committed ${fmtBytes(committedSlope)}, live heap after full GC ${fmtBytes(liveSlope)} (${gcsAfter.length} full GCs: ${liveFirst ? fmtBytes(liveFirst.liveAfter) : '—'} → ${liveLast ? fmtBytes(liveLast.liveAfter) : '—'}); RssAnon peak ${fmtBytes(Math.max(...samples.map((s) => s.rssAnon)))}`,
  );
  if (failed > 0) {
    notes.push(`${failed} users failed: ${JSON.stringify(Object.fromEntries(run.failures))}`);
    for (const line of run.kept) notes.push(`  ${line}`);
  }
  const flat = (perHundredThousand: number) => failed === 0 && perHundredThousand < FLAT_SLOPE_PER_100K;
  const figures: Figure[] = [
    {
      name: `soak RssAnon slope after warm-up, per 100k users (${USERS} users)`,
      value: fmtBytes(anonSlope),
      target: `< ${fmtBytes(FLAT_SLOPE_PER_100K)}`,
      met: flat(anonSlope),
    },
    {
      name: `soak live heap after full GC, slope per 100k users`,
      value: gcsAfter.length < 3 ? 'n/a' : fmtBytes(liveSlope),
      target: `< ${fmtBytes(FLAT_SLOPE_PER_100K)}`,
      met: gcsAfter.length < 3 ? undefined : flat(liveSlope),
    },
    {
      name: `soak RssAnon end / warm-up (${end.users} / ${atWarmup.users} users)`,
      value: `${(end.rssAnon / atWarmup.rssAnon).toFixed(2)}× (${fmtBytes(atWarmup.rssAnon)} → ${fmtBytes(end.rssAnon)})`,
      target: '—',
      met: undefined,
    },
    {
      name: 'soak VmRSS end / warm-up (with LMDB file pages)',
      value: `${(end.vmRss / atWarmup.vmRss).toFixed(2)}× (${fmtBytes(atWarmup.vmRss)} → ${fmtBytes(end.vmRss)})`,
      target: '—',
      met: undefined,
    },
    { name: 'soak users failed', value: String(failed), target: '0', met: failed === 0 },
  ];
  return { figures, notes };
}

export async function runSoakBench(): Promise<BenchResult> {
  const tmp = await tempDir('soak');
  const bounds = { seqKeys: Math.min(DEFAULT_SEQ_KEYS, BOUND_USERS), cachedInboxes: Math.min(DEFAULT_CACHED_INBOXES, BOUND_USERS) };
  let server: ChildServer | undefined;
  try {
    server = await startSeqlineChild(
      join(tmp.dir, 'server'),
      { SEQLINE_MAX_SEQ_KEYS: String(bounds.seqKeys), SEQLINE_MAX_CACHED_INBOXES: String(bounds.cachedInboxes) },
      undefined,
      SERVER_NODE_ARGS,
    );
    const every = Math.max(1, Math.floor(USERS / SAMPLES));
    const run = await drive(server, every);
    const result = report(run, every, bounds);
    const csv = process.env.BENCH_SOAK_CSV;
    if (csv) {
      const gcCsv = csv.replace(/(\.csv)?$/, '-gc.csv');
      await writeCsv(csv, run.samples);
      await writeFile(gcCsv, `users,live_after_full_gc\n${run.gcs.map((g) => `${g.users},${g.liveAfter}`).join('\n')}\n`);
      result.notes.push(`samples written to ${csv}, full GCs to ${gcCsv}`);
    }
    return result;
  } finally {
    await server?.stop();
    await tmp.remove();
  }
}
