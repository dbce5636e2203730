/**
 * `BENCH_PARTS=shapes`: what Cassandra itself allows for the append's write shape, with no
 * Seqline code on the path — the same client sends hand-built batches of 32 partitions:
 *   raw      one 3-column row per request (the store figure's raw limit)
 *   entry    the timeline row alone (what an append would cost without a dedup index)
 *   append   the timeline row + its dedup row under one partition key (the append's mutation)
 * The gap between `append` and the store figure is Seqline's own overhead (owner, pipeline,
 * encoding) sharing the two cores; the gap between `append` and `entry` is the dedup row.
 */
import type { Client } from 'cassandra-driver';
import type { Entry } from '@seqline/core';
import { ENTRY_COLUMNS, entryParams } from '@seqline/store/scylla';
import { messageEntry, RUN_ID } from './fixtures.ts';
import { fmtRate, fmtRatio } from './stats.ts';

type Loop = (ms: number, op: (i: number) => Promise<unknown>) => Promise<{ ops: number; ms: number }>;

const PER_BATCH = 32;
const ROUNDS = 2;

export async function writeShapes(client: Client, keyspace: string, loop: Loop, sliceMs: number, notes: string[]): Promise<void> {
  const entryInsert = `INSERT INTO ${keyspace}.timeline (inbox, bucket, ${ENTRY_COLUMNS.join(', ')}) VALUES (?, ?, ${ENTRY_COLUMNS.map(() => '?').join(', ')})`;
  const dedupInsert = `INSERT INTO ${keyspace}.timeline_appinfos (inbox, bucket, appinfo, seq) VALUES (?, ?, ?, ?)`;
  const rawInsert = `INSERT INTO ${keyspace}.raw_insert (inbox, seq, entry) VALUES (?, ?, ?)`;
  const options = { prepare: true };
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.raw_insert (inbox text, seq bigint, entry text, PRIMARY KEY (inbox, seq))`);
  const entry = (k: number): Entry => ({ ...messageEntry(`shape-${RUN_ID}-${k}`, 'peer', Date.now()), seq: k + 1 });
  const inbox = (k: number) => `shape-${RUN_ID}-${k % 2000}`;
  const rowOf = (k: number) => ({ query: entryInsert, params: [inbox(k), 0, ...entryParams(entry(k))] });
  const dedupOf = (k: number) => ({ query: dedupInsert, params: [inbox(k), 0, `shape-${RUN_ID}-${k}`, k + 1] });
  const batchOf = (i: number, statements: (k: number) => { query: string; params: unknown[] }[]) =>
    client.batch(Array.from({ length: PER_BATCH }, (_, j) => statements(i * PER_BATCH + j)).flat(), options);
  const shapes: [string, number, (i: number) => Promise<unknown>][] = [
    ['raw', 1, (i) => client.execute(rawInsert, [inbox(i), i, JSON.stringify(entry(i))], options)],
    ['entry', PER_BATCH, (i) => batchOf(i, (k) => [rowOf(k)])],
    ['append', PER_BATCH, (i) => batchOf(i, (k) => [rowOf(k), dedupOf(k)])],
  ];
  const rates = new Map<string, { rows: number; ms: number }>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, per, op] of shapes) {
      const slice = await loop(sliceMs, op);
      const sum = rates.get(name) ?? { rows: 0, ms: 0 };
      rates.set(name, { rows: sum.rows + slice.ops * per, ms: sum.ms + slice.ms });
    }
  }
  const rate = (name: string) => {
    const s = rates.get(name);
    return s === undefined ? 0 : s.rows / (s.ms / 1000);
  };
  notes.push(`write shapes (driver only, batches of ${PER_BATCH} partitions, ${ROUNDS} rounds of ${sliceMs / 1000} s):`);
  notes.push(
    `  raw 1 row/request ${fmtRate(rate('raw'))}; entry row ${fmtRate(rate('entry'))} (${fmtRatio(rate('entry'), rate('raw'))}); entry + dedup row ${fmtRate(rate('append'))} (${fmtRatio(rate('append'), rate('raw'))})`,
  );
}
