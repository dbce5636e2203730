/** Turns the peers bench's runs into table rows and detail notes. */
import type { SystemRun } from '../peers.ts';
import { fmtLatency, fmtMs, median } from '../stats.ts';
import type { StepLoad } from './meter.ts';
import type { PeersOptions, SystemKey } from './options.ts';
import { fmtValue, SYSTEM_LABELS, type Cell, type LoadRow, type Row } from './table.ts';

type Cells = Partial<Record<SystemKey, Cell>>;
type Loads = Partial<Record<SystemKey, StepLoad[]>>;

function collect(runs: SystemRun[], cell: (r: SystemRun) => Cell | undefined): Cells {
  const cells: Cells = {};
  for (const r of runs) {
    const c = cell(r);
    if (c !== undefined) cells[r.key] = c;
  }
  return cells;
}

function loads(runs: SystemRun[], load: (r: SystemRun) => StepLoad[] | undefined): Loads {
  const out: Loads = {};
  for (const r of runs) {
    const l = load(r);
    if (l !== undefined && l.length > 0) out[r.key] = l;
  }
  return out;
}

const OTHER = 'other load on the machine during the step';

export function peersRows(runs: SystemRun[], o: PeersOptions): Array<Row | LoadRow> {
  const rows: Array<Row | LoadRow> = [];
  const fixed = [...o.fixedRates].sort((a, b) => a - b);
  for (const rate of fixed) {
    const at = (r: SystemRun) => r.rates?.byRate.get(rate);
    const lost = (r: SystemRun) => {
      const x = at(r);
      return x && x.delivered < x.sent ? ` (${x.sent - x.delivered} of ${x.sent} not delivered)` : '';
    };
    for (const p of ['p50', 'p99'] as const) {
      rows.push({
        label: `1:1 delivery ${p} @ ${rate} msg/s`,
        unit: 'ms',
        better: 'lower',
        figure: p === 'p99',
        cells: collect(runs, (r) => {
          const x = at(r);
          return x && { value: x.delivery[p], flag: lost(r) };
        }),
      });
    }
    rows.push({
      label: `server CPU per delivered message @ ${rate} msg/s (processes + their stores)`,
      unit: 'us',
      better: 'lower',
      figure: rate === fixed[0],
      cells: collect(runs, (r) => {
        const x = at(r);
        return x && { value: ((x.load.processes + x.load.stores) * 1e6) / Math.max(1, x.delivered) };
      }),
    });
    rows.push({
      label: OTHER,
      loads: loads(runs, (r) => {
        const x = at(r);
        return x && [x.load];
      }),
    });
  }
  rows.push({
    label: `highest rate with p99 < ${o.p99LimitMs} ms`,
    unit: 'rate',
    better: 'higher',
    figure: true,
    cells: collect(runs, (r) => {
      if (!r.rates) return undefined;
      const { highestOk, firstFailed } = r.rates;
      // A load generator busy most of a core at the first rate that failed may have set the limit itself.
      const failed = firstFailed === undefined ? undefined : r.rates.byRate.get(firstFailed);
      const saturated = failed !== undefined && failed.load.loadgen / failed.load.seconds >= 0.8 ? ' (load generator saturated)' : '';
      if (highestOk === undefined) return { value: 0, text: `< ${o.ladder[0]} msg/s`, flag: ` (none held)${saturated}` };
      if (firstFailed === undefined) return { value: highestOk, flag: ' (top of the ladder: raise it)', atLeast: true };
      return { value: highestOk, flag: saturated };
    }),
  });
  rows.push({ label: OTHER, loads: loads(runs, (r) => (r.rates ? [...r.rates.byRate.values()].map((x) => x.load) : undefined)) });
  rows.push({
    label: `catch-up of ${o.catchUp} messages after a reconnect (median of ${o.catchUpRepeats})`,
    unit: 'ms',
    better: 'lower',
    figure: true,
    cells: collect(runs, (r) => r.catchUp && { value: median(r.catchUp.runs.map((x) => x.ms)) }),
  });
  rows.push({ label: OTHER, loads: loads(runs, (r) => r.catchUp && [r.catchUp.load]) });
  for (const size of o.groupSizes) {
    const g = (r: SystemRun) => r.groups.find((x) => x.members === size);
    const flag = (r: SystemRun) => ((g(r)?.missing ?? 0) > 0 ? ` (${g(r)?.missing} deliveries missing)` : '');
    rows.push({
      label: `one message to ${size} connected members: members' p50`,
      unit: 'ms',
      better: 'lower',
      figure: false,
      cells: collect(runs, (r) => g(r) && { value: median(g(r)?.p50s ?? []), flag: flag(r) }),
    });
    rows.push({
      label: `one message to ${size} connected members: last member`,
      unit: 'ms',
      better: 'lower',
      figure: true,
      cells: collect(runs, (r) => g(r) && { value: median(g(r)?.lasts ?? []), flag: flag(r) }),
    });
    rows.push({
      label: OTHER,
      loads: loads(runs, (r) => {
        const x = g(r);
        return x && [x.load];
      }),
    });
  }
  rows.push({
    label: `RSS per idle socket at ${o.idleSockets} sockets (server processes + private stores)`,
    unit: 'bytes',
    better: 'lower',
    figure: true,
    cells: collect(runs, (r) => r.idle && { value: r.idle.perSocket, flag: r.idle.open < r.idle.wanted ? ` (${r.idle.open} open)` : '' }),
  });
  rows.push({ label: OTHER, loads: loads(runs, (r) => r.idle && [r.idle.load]) });
  // Steps left out (BENCH_PEERS_STEPS) or failed everywhere leave empty rows.
  return rows.filter((row) => Object.keys('cells' in row ? row.cells : row.loads).length > 0);
}

export function stepNotes(runs: SystemRun[], o: PeersOptions, describe: (l: StepLoad) => string): string[] {
  const notes: string[] = [];
  for (const r of runs) {
    const name = SYSTEM_LABELS[r.key];
    for (const x of [...(r.rates?.byRate.values() ?? [])].sort((a, b) => a.rate - b.rate)) {
      const errs = [...x.errors].map(([code, n]) => `${code}×${n}`).join(', ') || 'none';
      const cpu = (s: number) => `${((s * 1e6) / Math.max(1, x.delivered)).toFixed(0)} µs`;
      notes.push(
        `${name} @ ${x.rate} msg/s (sent at ${x.achieved.toFixed(0)}/s): delivered ${x.delivered}/${x.sent}, refused: ${errs}; ${x.ok ? 'held' : 'did not hold'}${x.tries > 1 ? ` (try ${x.tries})` : ''}`,
        `  send → delivery ${fmtLatency(x.delivery)}`,
        `  send → ack p50 ${fmtMs(x.ack.p50)}, p99 ${fmtMs(x.ack.p99)}; generator lag p99 ${fmtMs(x.lag.p99)}, max ${fmtMs(x.lag.max)}`,
        `  CPU per delivered message: processes ${cpu(x.load.processes)}, stores ${cpu(x.load.stores)}, load generator ${cpu(x.load.loadgen)}`,
        `  ${describe(x.load)}`,
      );
    }
    if (r.catchUp) {
      const c = r.catchUp;
      notes.push(
        `${name} catch-up of ${c.count}: ${c.runs.map((x) => `${fmtMs(x.ms)} (${x.roundTrips} round trip${x.roundTrips === 1 ? '' : 's'})`).join(', ')}; offline inbox filled at ${c.fillRate.toFixed(0)} acknowledged msg/s`,
        `  ${describe(c.load)}`,
      );
    }
    for (const g of r.groups) {
      notes.push(
        `${name} group of ${g.members}${g.detail ? ` (${g.detail})` : ''}: connected in ${fmtMs(g.connectMs)}, formed in ${fmtMs(g.formMs)}; per message p50 ${g.p50s.map(fmtMs).join(', ')}; last ${g.lasts.map(fmtMs).join(', ')}; missing ${g.missing}`,
        `  ${describe(g.load)}`,
      );
    }
    if (r.idle) {
      const i = r.idle;
      notes.push(
        `${name} idle: VmRSS ${fmtValue('bytes', i.before)} → ${fmtValue('bytes', i.after)} with ${i.open} of ${i.wanted} sockets open`,
        `  ${describe(i.load)}`,
      );
    }
  }
  if (o.scale === 'smoke') notes.push('SMOKE scale: the figures prove the bench runs, they are not the figures of record');
  return notes;
}
