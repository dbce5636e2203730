/** The campaign's table: one line per round, then the totals of faults injected and anomalies found. */
import type { RoundResult } from './round.ts';

/** The checker's JSON report (tools/checker/main.go, Report). */
export interface CheckerReport {
  round: number;
  seed: string;
  mode: string;
  ops: number;
  acks: number;
  pushes: number;
  partitions: number;
  linearizable: number;
  inconclusive: number;
  convStates: number;
  afterSendEvents: number;
  notify: { calls: number; notifying: number; crashLost: number; badgeChecked: number };
  faults: Record<string, number>;
  counts: Record<string, number>;
  anomalies: { kind: string; where: string; detail: string }[];
  /** Losses inside a documented window (docs/faults.md, "Losses by design, measured"). */
  byDesign?: Record<string, number>;
  checkMs: number;
}

export interface RoundRow {
  round: number;
  mode: string;
  seed: string;
  result: RoundResult | undefined;
  report: CheckerReport | undefined;
  error: string | undefined;
}

const fmtMap = (m: Map<string, number> | Record<string, number>) =>
  (m instanceof Map ? [...m] : Object.entries(m))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}×${n}`)
    .join(' ') || '-';

function line(r: RoundRow): string {
  const res = r.result;
  const rep = r.report;
  const verdict = r.error
    ? 'ERROR'
    : res?.stalled
      ? 'STALLED'
      : res?.truncated
        ? 'TRUNCATED'
        : !rep
          ? '?'
          : rep.anomalies.length > 0
            ? `${rep.anomalies.length} ANOMALIES`
            : rep.inconclusive > 0
              ? 'INCONCLUSIVE'
              : 'ok';
  return [
    `#${r.round}`,
    r.mode,
    r.seed,
    res ? `acked ${res.acked}/${res.taken}${res.truncated ? ' (truncated)' : ''}` : '-',
    res ? `traffic ${(res.trafficMs / 1000).toFixed(0)}s total ${(res.totalMs / 1000).toFixed(0)}s` : '-',
    rep
      ? `logs ${rep.linearizable}/${rep.partitions} ops ${rep.ops} convs ${rep.convStates} after-send ${rep.afterSendEvents} notify ${rep.notify.calls} (crash-lost ${rep.notify.crashLost})`
      : '-',
    `faults ${res ? fmtMap(res.injected) : '-'}${res && res.skipped.size > 0 ? ` skipped ${fmtMap(res.skipped)}` : ''}`,
    rep && rep.anomalies.length > 0 ? `anomalies ${fmtMap(rep.counts)}` : '',
    verdict,
  ]
    .filter(Boolean)
    .join(' | ');
}

export function formatTable(rows: RoundRow[], o: { header: boolean; totals?: boolean }): string {
  const out = rows.map(line);
  if (!o.totals) return out.join('\n');
  const faults = new Map<string, number>();
  const skipped = new Map<string, number>();
  const anomalies = new Map<string, number>();
  const byDesign = new Map<string, number>();
  let acked = 0;
  let ops = 0;
  let trafficMs = 0;
  let totalMs = 0;
  for (const r of rows) {
    for (const [k, n] of r.result?.injected ?? []) faults.set(k, (faults.get(k) ?? 0) + n);
    for (const [k, n] of r.result?.skipped ?? []) skipped.set(k, (skipped.get(k) ?? 0) + n);
    for (const [k, n] of Object.entries(r.report?.counts ?? {})) anomalies.set(k, (anomalies.get(k) ?? 0) + n);
    for (const [k, n] of Object.entries(r.report?.byDesign ?? {})) if (n > 0) byDesign.set(k, (byDesign.get(k) ?? 0) + n);
    acked += r.result?.acked ?? 0;
    ops += r.report?.ops ?? 0;
    trafficMs += r.result?.trafficMs ?? 0;
    totalMs += r.result?.totalMs ?? 0;
  }
  const failed = rows.filter(
    (r) => r.error || !r.report || r.report.anomalies.length > 0 || r.report.inconclusive > 0 || r.result?.truncated,
  ).length;
  const header = o.header ? ['round | mode | seed | messages | time | checked | faults | anomalies | verdict', ''] : [];
  return [
    ...header,
    ...out,
    '',
    `rounds: ${rows.length} (${failed} not clean); messages acknowledged: ${acked}; ops recorded: ${ops}; traffic ${(trafficMs / 60_000).toFixed(1)} min, total ${(totalMs / 60_000).toFixed(1)} min`,
    `faults injected: ${fmtMap(faults)}${skipped.size > 0 ? `; skipped (target busy): ${fmtMap(skipped)}` : ''}`,
    `anomalies: ${anomalies.size === 0 ? 'none' : fmtMap(anomalies)}`,
    `by design (lost inside a documented window): ${fmtMap(byDesign)}`,
  ].join('\n');
}
