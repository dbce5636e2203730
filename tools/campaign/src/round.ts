/**
 * One round: start the system (embedded or distributed), lower the tier thresholds, create the
 * round's groups, run the devices and the offline pollers until the message budget is spent
 * while the nemesis injects its faults, then heal everything, let delivery settle, read the
 * final state, and hand the history to the checker.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Device, type DeviceContext } from './device.ts';
import { distributedFaults } from './faults-distributed.ts';
import { embeddedFaults } from './faults-embedded.ts';
import { HistoryWriter, now } from './history.ts';
import { HOOK_SECRET, startHookSink } from './hooks.ts';
import {
  CASSANDRA_FAULTS,
  EMBEDDED_FAULTS,
  Nemesis,
  planFaults,
  PROCESS_FAULTS,
  SERVICE_FAULTS,
  type FaultActions,
  type FaultKind,
} from './nemesis.ts';
import { planRound, ROUND_TIERS, type RoundPlan } from './plan.ts';
import { pollInbox } from './poller.ts';
import { Rng } from './rng.ts';
import { PrivateServices, type PrivateService } from './private-services.ts';
import { serviceFaults, ServiceSnapshots } from './service-faults.ts';
import { recordFinalState, settle, type Acked } from './settle.ts';
import { admin, Clocks, type SystemUnderTest } from './system.ts';
import { DistributedSystem } from './system-distributed.ts';
import { EmbeddedSystem } from './system-embedded.ts';
import type { RoundOptions, RoundResult } from './round-types.ts';

export type { RoundOptions, RoundResult } from './round-types.ts';

export async function runRound(o: RoundOptions): Promise<RoundResult> {
  const started = Date.now();
  const seedHex = (o.seed >>> 0).toString(16).padStart(8, '0');
  const rng = new Rng(o.seed);
  const history = new HistoryWriter(join(o.outDir, `round-${o.round}-${o.mode}-${seedHex}.jsonl`));
  const clocks = await Clocks.create(join(o.outDir, 'clocks', `${o.round}-${o.mode}-${seedHex}`));
  const hooks = await startHookSink({ history, rng: rng.fork('hooks'), wallClock: () => clocks.wallClock() });
  const hookEnv = {
    SEQLINE_HOOK_SECRET: HOOK_SECRET,
    SEQLINE_NOTIFY_URL: hooks.url,
    SEQLINE_AFTER_SEND_URL: hooks.url,
    SEQLINE_NOTIFY_WINDOW_MS: String(o.notifyWindowMs),
  };
  let sys: SystemUnderTest | undefined;
  let services: PrivateServices | undefined;
  const dirs: string[] = [];
  const devices: Device[] = [];
  let stopPollers = false;
  const pollers: Promise<void>[] = [];
  try {
    const embedded = o.mode === 'embedded' ? await EmbeddedSystem.start(`c${seedHex}`, clocks, hookEnv) : undefined;
    const privateOnes: PrivateService[] = [];
    if (o.mode === 'distributed' && o.serviceFaults) privateOnes.push('redis', 'nats');
    if (o.mode === 'distributed' && o.ownCassandra) privateOnes.push('cassandra');
    if (privateOnes.length > 0) {
      // Service faults act on services of the round's own, never on the shared ones.
      const dir = join(o.outDir, 'services', `${o.round}-${seedHex}`);
      dirs.push(dir);
      services = await PrivateServices.start(dir, privateOnes);
      o.log(`private ${services.describe()} (data under ${dir})`);
    }
    const distributed =
      o.mode === 'distributed'
        ? await DistributedSystem.start({ workers: o.workers, gateways: o.gateways, clocks, hookEnv, serviceEnv: services?.env() ?? {} })
        : undefined;
    const system = (embedded ?? distributed) as SystemUnderTest;
    sys = system;
    await admin(system, clocks, 'PUT', '/tiers', ROUND_TIERS);
    const plan = planRound(rng.fork('plan'), seedHex);
    const churnMembers = new Set(plan.groups.find((g) => g.churn)?.members ?? []);
    const acked: Acked[] = [];
    const ackedKeys = new Set<string>();
    let remaining = o.messages;
    let stopped = false;
    let lastAckAt = Date.now();
    const errors = new Map<string, number>();
    let nemesis: Nemesis | undefined;
    const fanoutGroups = new Set(plan.groups.filter((g) => g.tier !== 'small').map((g) => g.id));
    const ctx: DeviceContext = {
      plan,
      tenant: system.tenant,
      history,
      gateways: () => system.wsBases(),
      wallClock: () => clocks.wallClock(),
      takeMessage: () => (remaining > 0 ? (remaining--, true) : false),
      budgetSpent: () => remaining <= 0,
      stopped: () => stopped,
      churnMembers,
      errors,
      onReply: (user, op, args, res) => {
        if (op !== 'send' || res.ok !== true) return;
        const key = `${user}/${String(args.appinfo)}`;
        if (ackedKeys.has(key)) return;
        ackedKeys.add(key);
        const to = args.to as Acked['to'];
        acked.push({ sender: user, appinfo: String(args.appinfo), to, ret: now() });
        lastAckAt = Date.now();
        nemesis?.onAck('group' in to && fanoutGroups.has(to.group));
      },
    };
    for (const d of plan.devices) devices.push(new Device(d.user, d.dev, ctx, rng.fork(`device:${d.dev}`)));
    await Promise.all(devices.map((d) => d.start()));
    await createGroups(plan, devices);
    history.write({
      t: 'meta',
      round: o.round,
      seed: seedHex,
      mode: o.mode,
      tenant: system.tenant,
      users: plan.online,
      offline: plan.offline,
      groups: plan.groups,
      notifyWindowMs: o.notifyWindowMs,
      hooks: true,
      userShards: Object.fromEntries(
        [...plan.online, ...plan.offline].flatMap((u) => {
          const s = system.userShard(u);
          return s === undefined ? [] : [[u, s]];
        }),
      ),
    });
    let snapshots: ServiceSnapshots | undefined;
    let snapshotAt: number | undefined;
    const actions: Partial<FaultActions> = embedded
      ? embeddedFaults(embedded, clocks, plan)
      : distributedFaults(distributed as DistributedSystem, clocks);
    let weights = embedded ? EMBEDDED_FAULTS : PROCESS_FAULTS;
    if (distributed && services?.has('redis')) {
      const snapshotDir = join(o.outDir, 'snapshots', `${o.round}-${seedHex}`);
      dirs.push(snapshotDir);
      const at = now();
      snapshots = await ServiceSnapshots.take(services, snapshotDir);
      snapshotAt = at;
      history.write({
        t: 'fault',
        kind: 'snapshot',
        at,
        end: now(),
        target: 'services',
        detail: 'copies of the Redis data and the JetStream store',
      });
      weights = { ...weights, ...SERVICE_FAULTS };
    }
    if (distributed && services)
      Object.assign(
        actions,
        serviceFaults(services, () => snapshots),
      );
    if (distributed && services?.has('cassandra')) weights = { ...weights, ...CASSANDRA_FAULTS };
    if (o.onlyFaults) weights = onlyFaults(weights, o.onlyFaults);
    const outageChance = o.onlyFaults && !o.onlyFaults.includes('outage30') ? 0 : o.outageChance;
    nemesis = new Nemesis(planFaults(rng.fork('nemesis'), o.messages, weights, outageChance), actions as FaultActions, history);
    hooks.failRate = o.hookFailRate;
    for (const user of plan.offline)
      pollers.push(pollInbox({ sys: system, user, history, wallClock: () => clocks.wallClock(), stopped: () => stopPollers }));

    const trafficStart = Date.now();
    lastAckAt = trafficStart;
    const limit = setTimeout(() => (stopped = true), o.trafficLimitMs);
    let stalled = false;
    const watchdog = setInterval(() => {
      if (stopped || remaining <= 0 || Date.now() - lastAckAt < o.stallMs) return;
      stalled = stopped = true;
      o.log(`no message acknowledged for ${o.stallMs} ms with ${remaining} to send: traffic stopped, round stalled`);
    }, 1000);
    await Promise.all(devices.map((d) => d.run()));
    clearTimeout(limit);
    clearInterval(watchdog);
    const truncated = stopped;
    stopped = true;
    const trafficMs = Date.now() - trafficStart;
    const errorList = [...errors].map(([k, n]) => `${k}×${n}`).join(' ') || 'none';
    o.log(
      `traffic done: ${acked.length} acknowledged of ${o.messages - Math.max(0, remaining)} taken in ${trafficMs} ms${truncated ? ' (time limit)' : ''}; client errors: ${errorList}`,
    );
    await nemesis.drain();
    await system.healthy(180_000);
    hooks.failRate = 0;
    // Acknowledged after the stores were copied and before a JetStream rollback stopped the
    // server: its jobs may be gone with the rollback (docs/faults.md), so the wait does not hold
    // out for them.
    const rollbacks = nemesis.done.filter((f) => f.kind === 'nats-rollback').map((f) => f.stopped ?? f.at);
    const exposed = (a: Acked) => snapshotAt !== undefined && a.ret >= snapshotAt && rollbacks.some((stopped) => stopped >= a.ret);
    const settleTimeoutMs = 180_000;
    const settled = await settle({ sys: system, clocks, plan, acked, exposed, hooks, timeoutMs: settleTimeoutMs });
    o.log(
      `settled in ${settled.deliveredMs} ms: undelivered=${settled.undelivered} afterSendMissing=${settled.afterSendMissing} unnotified=${settled.unnotified} (notification wait ${settled.notifiedMs} ms: ${settled.notifyWaitEnd}, up to ${settled.peakNotifyJobs} notify jobs pending)`,
    );
    if (settled.notifyWaitEnd === 'bound') {
      const b = settled.notifyBacklog;
      o.log(
        `settle: the notification wait reached its ${settleTimeoutMs} ms safety bound with ${b ? `${b.pendingJobs} notify job(s) pending and ${b.heldItems} notify item(s) held` : `the backlog unread (${settled.notifyBacklogError ?? 'no read'})`}: unnotified=${settled.unnotified} may be late, not lost`,
      );
    }
    stopPollers = true;
    await Promise.all(pollers);
    for (const d of devices) d.close();
    await recordFinalState({ sys: system, clocks, plan, history });
    return {
      file: history.path,
      dirs,
      seedHex,
      mode: o.mode,
      acked: acked.length,
      taken: o.messages - Math.max(0, remaining),
      injected: nemesis.injected,
      skipped: nemesis.skipped,
      nemesisFailures: nemesis.failed,
      errors,
      trafficMs,
      totalMs: Date.now() - started,
      truncated,
      stalled,
      settle: settled,
    };
  } finally {
    stopPollers = true;
    await Promise.all(pollers).catch(() => undefined);
    for (const d of devices) d.close();
    if (sys instanceof DistributedSystem)
      await keepProcessLogs(sys, join(o.outDir, 'logs', `${o.round}-${seedHex}`), dirs).catch((err: unknown) =>
        o.log(`keeping the processes' logs failed: ${String(err)}`),
      );
    await sys?.close().catch((err: unknown) => o.log(`closing the system failed: ${String(err)}`));
    // After the processes that use them.
    await services?.close().catch((err: unknown) => o.log(`stopping the private services failed: ${String(err)}`));
    await hooks.close();
    await history.close();
  }
}

/**
 * Each process's log records (info and above) beside the history, one JSON line each: what the
 * workers and gateways did, for a round the checker rejects (deleted with a clean one's history).
 */
async function keepProcessLogs(sys: DistributedSystem, dir: string, dirs: string[]): Promise<void> {
  dirs.push(dir);
  await mkdir(dir, { recursive: true });
  for (const p of sys.processes()) await writeFile(join(dir, `${p.name}.jsonl`), p.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** The weights of the kinds named (the 30-minute outage is not weighted: it is a chance per round). */
function onlyFaults(weights: Partial<Record<FaultKind, number>>, kinds: string[]): Partial<Record<FaultKind, number>> {
  const unknown = kinds.filter((k) => k !== 'outage30' && !(k in weights));
  if (unknown.length > 0) throw new Error(`--only-faults: ${unknown.join(', ')} not among ${Object.keys(weights).join(', ')}, outage30`);
  const kept = Object.fromEntries(Object.entries(weights).filter(([k]) => kinds.includes(k)));
  if (Object.keys(kept).length === 0 && !kinds.includes('outage30')) throw new Error('--only-faults: no fault left');
  return kept;
}

/** Creates the round's groups through their admins' devices, with the tiers the plan says. */
async function createGroups(plan: RoundPlan, devices: Device[]): Promise<void> {
  for (const g of plan.groups) {
    const device = devices.find((d) => d.user === g.admin);
    if (!device) throw new Error(`no device for ${g.admin}`);
    // The lowered thresholds reach every process within about a second: try until the tier is right.
    for (let attempt = 0; ; attempt++) {
      const id = attempt === 0 ? g.id : `${g.id}-${attempt}`;
      const r = await device.sdk.createGroup({ name: g.id, members: g.members.filter((m) => m !== g.admin), group: id });
      if (r.tier === g.tier) {
        g.id = id;
        break;
      }
      if (attempt >= 30) throw new Error(`group ${g.id}: tier ${r.tier}, wanted ${g.tier}`);
      await new Promise((res) => setTimeout(res, 500));
    }
  }
}
