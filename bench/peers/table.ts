/**
 * The peers table: one row per figure, one column per system, and Seqline's ratio to the best
 * peer (the better of the Centrifugo columns). A row of "other load" follows each step's figures.
 */
import { fmtBytes, fmtMs, formatTable, type Figure } from '../stats.ts';
import { othersShare, type StepLoad } from './meter.ts';
import type { SystemKey } from './options.ts';

export type Unit = 'ms' | 'rate' | 'us' | 'bytes';

export interface Cell {
  value: number;
  /** Shown instead of the formatted value. */
  text?: string;
  /** Appended to the value, e.g. a mark that messages were lost. */
  flag?: string;
  /** The true figure is at least this (the top of the rates tried held). */
  atLeast?: boolean;
}

export interface Row {
  label: string;
  unit: Unit;
  better: 'lower' | 'higher';
  cells: Partial<Record<SystemKey, Cell>>;
  /** Also reported as a run.ts figure (ratio to the best peer). */
  figure: boolean;
}

export interface LoadRow {
  label: string;
  loads: Partial<Record<SystemKey, StepLoad[]>>;
}

export const SYSTEM_LABELS: Record<SystemKey, string> = {
  'centrifugo-redis': 'Centrifugo (Redis)',
  'centrifugo-memory': 'Centrifugo (memory)',
  'seqline-embedded': 'Seqline embedded',
  'seqline-distributed': 'Seqline distributed',
};
const PEERS: SystemKey[] = ['centrifugo-redis', 'centrifugo-memory'];
const OURS: SystemKey[] = ['seqline-embedded', 'seqline-distributed'];

export function fmtValue(unit: Unit, v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  switch (unit) {
    case 'ms':
      return fmtMs(v);
    case 'rate':
      return `${Math.round(v)} msg/s`;
    case 'us':
      return `${v.toFixed(0)} µs`;
    case 'bytes':
      return fmtBytes(v);
  }
}

const cellText = (unit: Unit, c: Cell | undefined) => (c === undefined ? '—' : (c.text ?? fmtValue(unit, c.value)) + (c.flag ?? ''));

function bestPeer(row: Row): { key: SystemKey; cell: Cell } | undefined {
  let best: { key: SystemKey; cell: Cell } | undefined;
  for (const key of PEERS) {
    const cell = row.cells[key];
    if (cell === undefined || !Number.isFinite(cell.value)) continue;
    const better = best === undefined || (row.better === 'lower' ? cell.value < best.cell.value : cell.value > best.cell.value);
    if (better) best = { key, cell };
  }
  return best;
}

function ratio(row: Row, ours: SystemKey): string {
  const best = bestPeer(row);
  const cell = row.cells[ours];
  if (!best || !cell || !Number.isFinite(cell.value) || best.cell.value === 0) return '—';
  const x = `${(cell.value / best.cell.value).toFixed(2)}×`;
  if (Boolean(best.cell.atLeast) === Boolean(cell.atLeast)) return best.cell.atLeast ? `? (${x} of lower bounds)` : x;
  return best.cell.atLeast ? `≤ ${x}` : `≥ ${x}`;
}

function loadText(loads: StepLoad[] | undefined): string {
  if (!loads || loads.length === 0) return '—';
  const shares = loads.map((l) => Math.round(100 * othersShare(l)));
  const [lo, hi] = [Math.min(...shares), Math.max(...shares)];
  return lo === hi ? `${lo}%` : `${lo}–${hi}%`;
}

/** The table, for the systems that ran (in the order of `systems`). */
export function peersTable(systems: SystemKey[], rows: Array<Row | LoadRow>): string {
  const ours = OURS.filter((k) => systems.includes(k));
  const withRatios = PEERS.some((k) => systems.includes(k)) ? ours : [];
  const header = [
    'figure',
    'better',
    ...systems.map((k) => SYSTEM_LABELS[k]),
    ...withRatios.map((k) => `${SYSTEM_LABELS[k].replace('Seqline ', '')} ÷ best peer`),
  ];
  const lines = rows.map((row) =>
    'cells' in row
      ? [row.label, row.better, ...systems.map((k) => cellText(row.unit, row.cells[k])), ...withRatios.map((k) => ratio(row, k))]
      : [`  ${row.label}`, '', ...systems.map((k) => loadText(row.loads[k])), ...withRatios.map(() => '')],
  );
  return formatTable(header, lines);
}

/** run.ts figures: Seqline's value against the best peer's, for the rows marked `figure`. */
export function peersFigures(systems: SystemKey[], rows: Array<Row | LoadRow>): Figure[] {
  const figures: Figure[] = [];
  for (const row of rows) {
    if (!('cells' in row) || !row.figure) continue;
    const best = bestPeer(row);
    for (const ours of OURS.filter((k) => systems.includes(k) && row.cells[k] !== undefined)) {
      const r = ratio(row, ours);
      figures.push({
        name: `${row.label} — ${SYSTEM_LABELS[ours]}`,
        value: cellText(row.unit, row.cells[ours]),
        target: '—',
        met: undefined,
        raw: best ? `${cellText(row.unit, best.cell)} ${SYSTEM_LABELS[best.key]}` : 'no peer ran',
        ratio: r === '—' ? '—' : `${r} best peer`,
      });
    }
  }
  return figures;
}
