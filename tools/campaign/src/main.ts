/**
 * The fault campaign (scripts/campaign.sh, `npm run campaign`): N rounds of M messages in each
 * mode, each round's history judged by the independent checker (tools/checker, Go); the
 * histories of failing rounds are kept; a table of faults injected and anomalies found is
 * printed; a round is replayed from its seed with `--replay <seed>`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hashSeed } from './rng.ts';
import { runRound, type RoundResult } from './round.ts';
import type { Mode } from './system.ts';
import { formatTable, type CheckerReport, type RoundRow } from './table.ts';

const REPO = resolve(new URL('../../../', import.meta.url).pathname);

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '100' },
    messages: { type: 'string', default: '10000' },
    mode: { type: 'string', default: 'both' },
    seed: { type: 'string' },
    replay: { type: 'string' },
    'service-faults': { type: 'boolean', default: false },
    'own-cassandra': { type: 'boolean', default: false },
    'only-faults': { type: 'string' },
    out: { type: 'string' },
    'time-limit-min': { type: 'string', default: '0' },
    'round-traffic-limit-s': { type: 'string', default: '1800' },
    'stall-s': { type: 'string', default: '120' },
    'keep-all': { type: 'boolean', default: false },
    workers: { type: 'string', default: '2' },
    gateways: { type: 'string', default: '2' },
    'notify-window-ms': { type: 'string', default: '300' },
    'outage-chance': { type: 'string', default: '0.3' },
    'hook-fail-rate': { type: 'string', default: '0.03' },
    checker: { type: 'string', default: join(REPO, 'tools/checker/dist/checker') },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const USAGE = `usage: npm run campaign -- [options]   (or scripts/campaign.sh [options])
  --mode embedded|distributed|both   which mode's rounds to run (both)
  --rounds N --messages M            rounds per mode (100) of M messages (10000)
  --seed S | --replay HEX            the campaign's seed; or replay one round from its seed
  --time-limit-min N                 start no round after N minutes (0: no limit); touch <out>/STOP to
                                     stop after the running round, with the table
  --service-faults                   add Redis and NATS faults on a private pair (distributed)
  --own-cassandra                    a private Cassandra node, restarted as a fault
  --only-faults a,b                  inject only these faults
  --outage-chance P                  chance of a simulated 30-minute worker outage a round (0.3)
  --hook-fail-rate P                 share of hook calls the receiver fails (0.03)
  --workers N --gateways N           distributed processes (2, 2)
  --notify-window-ms N               offline notification window (300)
  --out DIR --json FILE --keep-all   where histories go; a JSON summary; keep clean histories too
  --round-traffic-limit-s N          most seconds of traffic a round (1800)
  --stall-s N                        a round with no acknowledged send for N seconds is stalled (120)
  --checker PATH                     the checker binary (tools/checker/dist/checker, built by the script)
docs/faults.md, "The randomized campaign", says what a round does and what the checker judges.
`;
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const log = (line: string) => process.stdout.write(`[campaign] ${line}\n`);

function runChecker(file: string): Promise<CheckerReport> {
  return new Promise((resolvePromise, reject) => {
    execFile(args.checker, ['-json', '-timeout', '300s', file], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = (err as { code?: number } | null)?.code ?? 0;
      if (err && code !== 1) return reject(new Error(`checker failed (${String(code)}): ${stderr || err.message}`));
      try {
        resolvePromise(JSON.parse(stdout) as CheckerReport);
      } catch (parseErr) {
        reject(new Error(`checker output is not a report: ${String(parseErr)}: ${stdout.slice(0, 500)}`));
      }
    });
  });
}

const MAX_FAILED_TO_RUN_IN_A_ROW = 3;

async function main(): Promise<number> {
  const modes: Mode[] = args.mode === 'both' ? ['embedded', 'distributed'] : [args.mode as Mode];
  if (!modes.every((m) => m === 'embedded' || m === 'distributed'))
    throw new Error(`--mode: embedded, distributed or both, not ${args.mode}`);
  const replay = args.replay;
  const rounds = replay ? 1 : Number(args.rounds);
  const campaignSeed = args.seed ?? String(Date.now());
  const out = resolve(args.out ?? join(REPO, 'artifacts/campaign', new Date().toISOString().replace(/[:.]/g, '-')));
  await mkdir(out, { recursive: true });
  const deadline = Number(args['time-limit-min']) > 0 ? Date.now() + Number(args['time-limit-min']) * 60_000 : Infinity;
  log(
    `seed ${campaignSeed}, ${rounds} round(s) × ${args.messages} messages, modes ${modes.join('+')}, service faults ${args['service-faults'] ? 'on' : 'off'}, cassandra ${args['own-cassandra'] ? 'private (restarted)' : 'shared'}; out ${out}`,
  );
  const rows: RoundRow[] = [];
  // A mode whose rounds keep failing to run fails for a reason the next round shares (a stale
  // keyspace, a missing binary): its later rounds are not started.
  const failedInARow = new Map<Mode, number>();
  // A run is stopped between rounds, never inside one: by its time limit, or by a file named
  // STOP in its out dir (the rounds so far then keep their table and totals, which a kill loses).
  const stopFile = join(out, 'STOP');
  await rm(stopFile, { force: true }); // left by an earlier run into the same dir
  const stopReason = (): string | undefined =>
    Date.now() > deadline ? 'time limit reached' : existsSync(stopFile) ? `${stopFile} found` : undefined;
  let stopped: string | undefined;
  for (let round = 1; round <= rounds && stopped === undefined; round++) {
    for (const mode of modes) {
      stopped = stopReason();
      if (stopped !== undefined) {
        log(`${stopped}: no more rounds`);
        break;
      }
      if ((failedInARow.get(mode) ?? 0) >= MAX_FAILED_TO_RUN_IN_A_ROW) continue;
      const seed = replay ? parseInt(replay, 16) : hashSeed(`${campaignSeed}/${round}/${mode}`);
      let result: RoundResult | undefined;
      let report: CheckerReport | undefined;
      let error: string | undefined;
      try {
        result = await runRound({
          round,
          seed,
          mode,
          messages: Number(args.messages),
          serviceFaults: args['service-faults'] === true,
          ownCassandra: args['own-cassandra'] === true,
          onlyFaults: args['only-faults']?.split(',').filter(Boolean),
          outDir: out,
          trafficLimitMs: Number(args['round-traffic-limit-s']) * 1000,
          stallMs: Number(args['stall-s']) * 1000,
          workers: Number(args.workers),
          gateways: Number(args.gateways),
          notifyWindowMs: Number(args['notify-window-ms']),
          outageChance: Number(args['outage-chance']),
          hookFailRate: Number(args['hook-fail-rate']),
          log: (line) => log(`round ${round} ${mode}: ${line}`),
        });
        report = await runChecker(result.file);
      } catch (err) {
        error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        log(`round ${round} ${mode}: FAILED TO RUN: ${error}`);
      }
      failedInARow.set(mode, error === undefined ? 0 : (failedInARow.get(mode) ?? 0) + 1);
      if (failedInARow.get(mode) === MAX_FAILED_TO_RUN_IN_A_ROW)
        log(`${mode}: ${MAX_FAILED_TO_RUN_IN_A_ROW} rounds in a row failed to run: no more ${mode} rounds`);
      const row: RoundRow = { round, mode, seed: (seed >>> 0).toString(16).padStart(8, '0'), result, report, error };
      rows.push(row);
      // A round cut short (stalled, or at the traffic limit) is not clean, whatever its history says.
      const clean = report !== undefined && report.anomalies.length === 0 && report.inconclusive === 0 && !error && !result?.truncated;
      if (result && clean && !args['keep-all'])
        for (const f of [result.file, ...result.dirs]) await rm(f, { recursive: true, force: true });
      log(formatTable([row], { header: false }));
      if (!clean && result)
        log(
          `round ${round} ${mode}: history kept: ${result.file}; replay: npm run campaign -- --mode ${mode} --messages ${args.messages}${args['service-faults'] ? ' --service-faults' : ''}${args['own-cassandra'] ? ' --own-cassandra' : ''}${args['only-faults'] ? ` --only-faults ${args['only-faults']}` : ''} --replay ${row.seed}`,
        );
    }
  }
  await rm(join(out, 'clocks'), { recursive: true, force: true });
  process.stdout.write(`\n${formatTable(rows, { header: true, totals: true })}\n`);
  if (args.json) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      args.json,
      JSON.stringify(
        rows.map((r) => ({
          ...r,
          result: r.result && {
            ...r.result,
            injected: Object.fromEntries(r.result.injected),
            skipped: Object.fromEntries(r.result.skipped),
            errors: Object.fromEntries(r.result.errors),
          },
        })),
        null,
        2,
      ),
    );
  }
  const bad = rows.filter((r) => r.error || !r.report || r.report.anomalies.length > 0 || r.report.inconclusive > 0 || r.result?.truncated);
  return bad.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`campaign: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
