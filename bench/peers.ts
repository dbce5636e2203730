/**
 * `npm run bench -- peers`: Seqline against Centrifugo (Redis engine and memory engine), one load
 * generator, the same scenario for every system, one system running at a time:
 * 1:1 delivery at fixed offered rates and the highest rate with p99 under 25 ms; catch-up of
 * 10 000 messages after a reconnect; one message to 1 000 and 10 000 connected group members;
 * server CPU per delivered message; RSS per idle socket at 10 000 sockets. Each step records the
 * load other processes put on the machine meanwhile. Scale and choices: bench/peers/options.ts.
 */
import { RUN_ID } from './fixtures.ts';
import { type BenchResult } from './stats.ts';
import { runCatchUp, type CatchUpRun } from './peers/catchup.ts';
import { ensureCentrifugo, startCentrifugo } from './peers/centrifugo.ts';
import { runGroup, type GroupRun } from './peers/groups.ts';
import { runIdle, type IdleRun } from './peers/idle.ts';
import { describeLoad } from './peers/meter.ts';
import { peersOptions, type PeersOptions, type StepKey, type SystemKey } from './peers/options.ts';
import { schedulingPolicy } from './peers/processes.ts';
import { runRates, type RatesResult } from './peers/rates.ts';
import { peersRows, stepNotes } from './peers/report.ts';
import { startSeqlineEmbedded } from './peers/seqline.ts';
import { startSeqlineDistributed } from './peers/seqline-distributed.ts';
import type { PeerSystem } from './peers/system.ts';
import { peersFigures, peersTable, SYSTEM_LABELS } from './peers/table.ts';

export interface SystemRun {
  key: SystemKey;
  setup: string[];
  rates?: RatesResult;
  catchUp?: CatchUpRun;
  groups: GroupRun[];
  idle?: IdleRun;
  failures: string[];
}

const progress = (line: string) => process.stderr.write(`peers: ${line}\n`);

function start(key: SystemKey, o: PeersOptions): Promise<PeerSystem> {
  switch (key) {
    case 'centrifugo-redis':
      return startCentrifugo('redis', o);
    case 'centrifugo-memory':
      return startCentrifugo('memory', o);
    case 'seqline-embedded':
      return startSeqlineEmbedded();
    case 'seqline-distributed':
      return startSeqlineDistributed(o);
  }
}

async function runStep(system: PeerSystem, step: StepKey, run: SystemRun, o: PeersOptions, tag: string): Promise<void> {
  switch (step) {
    case 'rates':
      run.rates = await runRates(system, o, tag, (line) => progress(`${system.label}: ${line}`));
      return;
    case 'catchup':
      run.catchUp = await runCatchUp(system, o, tag);
      progress(`${system.label}: catch-up ${run.catchUp.runs.map((r) => `${r.ms.toFixed(0)} ms`).join(', ')}`);
      return;
    case 'groups':
      for (const size of o.groupSizes) {
        const g = await runGroup(system, size, o, tag);
        run.groups.push(g);
        progress(`${system.label}: group of ${size}: last member ${g.lasts.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
      }
      return;
    case 'idle':
      run.idle = await runIdle(system, o, tag);
      progress(`${system.label}: ${run.idle.open} idle sockets, ${(run.idle.perSocket / 1024).toFixed(1)} KiB each`);
      return;
  }
}

async function runSystem(key: SystemKey, index: number, o: PeersOptions): Promise<SystemRun> {
  const run: SystemRun = { key, setup: [], groups: [], failures: [] };
  // Ids unique per run and per system: Seqline distributed keeps its keyspace between runs.
  const tag = `p${index}${RUN_ID}`;
  progress(`starting ${SYSTEM_LABELS[key]}`);
  let system: PeerSystem;
  try {
    system = await start(key, o);
  } catch (err) {
    run.failures.push(`start: ${err instanceof Error ? err.message : String(err)}`);
    progress(`${SYSTEM_LABELS[key]} did not start: ${run.failures[0]}`);
    return run;
  }
  run.setup = system.setup;
  try {
    for (const step of o.steps) {
      try {
        await runStep(system, step, run, o, tag);
      } catch (err) {
        run.failures.push(`${step}: ${err instanceof Error ? err.message : String(err)}`);
        progress(`${system.label}: ${step} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
  } finally {
    await system.stop();
  }
  return run;
}

export async function runPeersBench(): Promise<BenchResult> {
  const o = peersOptions();
  if (o.systems.some((k) => k.startsWith('centrifugo'))) ensureCentrifugo();
  const runs: SystemRun[] = [];
  for (const [i, key] of o.systems.entries()) runs.push(await runSystem(key, i, o));
  const ran = runs.filter((r) => !r.failures.some((f) => f.startsWith('start:'))).map((r) => r.key);
  if (ran.length === 0) throw new Error(`no system started: ${runs.map((r) => r.failures.join('; ')).join(' | ')}`);
  const rows = peersRows(runs, o);
  const notes = [
    `scale ${o.scale}: ${o.pairs} pairs; offered rates ${o.fixedRates.join(', ')} msg/s; ladder ${o.ladder.join(', ')} (+${o.refine} bisection, ${o.retries} more tr${o.retries === 1 ? 'y' : 'ies'} of a rate that did not hold); ` +
      `${o.warmupMs / 1000} s warm-up, ${o.measureMs / 1000} s measured per rate; catch-up ${o.catchUp}; groups ${o.groupSizes.join(', ')}; ${o.idleSockets} idle sockets`,
    `one load generator (this process, node ${process.version}); every server process and private store under ${schedulingPolicy()}; one system at a time`,
    ...runs.flatMap((r) => r.setup),
    '',
    ...peersTable(ran, rows).split('\n'),
    '',
    ...stepNotes(runs, o, describeLoad),
  ];
  for (const r of runs) for (const f of r.failures) notes.push(`FAILED ${SYSTEM_LABELS[r.key]} ${f}`);
  return { figures: peersFigures(ran, rows), notes };
}
