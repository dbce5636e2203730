/**
 * What a worker's shard owners count (ShardOwnerHost.ownerTallies), at /metrics: index catch-ups
 * of inboxes whose conversation index fell behind, and the entries of failed appends that may have
 * landed (told of after the owner's next successful write). `…_total{outcome="abandoned"}` counts
 * entries an owner dropped with its lease before it could tell of them: stored, perhaps never
 * pushed nor notified (docs/faults.md, "Losses by design").
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { OwnerTallies } from '@seqline/cluster';

export function registerOwnerMetrics(registry: Registry, tallies: () => OwnerTallies): void {
  const registers = [registry];
  new Gauge({
    name: 'seqline_worker_index_catch_ups_pending',
    help: 'inboxes whose conversation index waits for a catch-up by their owner',
    registers,
    collect() {
      this.set(tallies().indexCatchUps.pending);
    },
  });
  new Counter({
    name: 'seqline_worker_index_catch_ups_total',
    help: 'index catch-ups by outcome: caught_up, gave_up (attempts spent), dropped (queue full), handed_on (left to the next owner)',
    labelNames: ['outcome'],
    registers,
    collect() {
      const t = tallies();
      this.reset();
      this.inc({ outcome: 'caught_up' }, t.indexCatchUps.caughtUp);
      this.inc({ outcome: 'gave_up' }, t.indexCatchUps.gaveUp);
      this.inc({ outcome: 'dropped' }, t.indexCatchUps.dropped);
      this.inc({ outcome: 'handed_on' }, t.catchUpsHandedOn);
    },
  });
  new Gauge({
    name: 'seqline_worker_unsettled_entries',
    help: 'entries of failed appends that may have landed, held until their owner next writes',
    registers,
    collect() {
      this.set(tallies().unsettledAppends.held);
    },
  });
  new Counter({
    name: 'seqline_worker_unsettled_entries_total',
    help: 'entries of failed appends by outcome: landed (found stored, told of), dropped (past the bound), abandoned (owner gone first)',
    labelNames: ['outcome'],
    registers,
    collect() {
      const t = tallies();
      this.reset();
      this.inc({ outcome: 'landed' }, t.unsettledAppends.landed);
      this.inc({ outcome: 'dropped' }, t.unsettledAppends.dropped);
      this.inc({ outcome: 'abandoned' }, t.unsettledAbandoned);
    },
  });
}
