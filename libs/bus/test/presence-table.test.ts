/**
 * The publisher's view of who is connected where. It routes huge-group pushes, so a wrong view
 * means a member online and not pushed: whatever the network loses, duplicates or reorders,
 * the table must either match its buses or say it is not ready.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PresenceTable, type PresenceDelta } from '../src/presence-table.ts';

const hb = 100;

function table(now = 0) {
  const asked: string[] = [];
  const t = new PresenceTable({ heartbeatMs: hb }, (bus) => asked.push(bus), now);
  return { t, asked };
}

const delta = (seq: number, add: string[] = [], del: string[] = [], bus = 'A'): PresenceDelta => ({ bus, seq, add, del });

describe('PresenceTable', () => {
  it('learns a new bus from its first delta, and is ready only after a heartbeat period', () => {
    const { t, asked } = table();
    t.delta(delta(1, ['alice', 'bob']), 10);
    t.delta(delta(2, ['carol'], ['bob']), 20);
    expect(t.busesOf('alice')).toEqual(['A']);
    expect(t.busesOf('bob')).toEqual([]);
    expect(t.busesOf('carol')).toEqual(['A']);
    expect(asked).toEqual([]);
    // A bus never heard of may still be about to heartbeat: not ready within 1.5 periods.
    expect(t.ready(149)).toBe(false);
    expect(t.ready(150)).toBe(true);
  });

  it('ignores a duplicated delta', () => {
    const { t } = table();
    t.delta(delta(1, ['alice']), 0);
    t.delta(delta(2, [], ['alice']), 0);
    t.delta(delta(1, ['alice']), 0);
    expect(t.busesOf('alice')).toEqual([]);
  });

  it('on a gap asks for a snapshot, is not ready until it is whole, then applies the later deltas on top', () => {
    const { t, asked } = table();
    t.delta(delta(1, ['alice']), 0);
    t.delta(delta(3, ['carol']), 200); // 2 was lost
    expect(asked).toEqual(['A']);
    expect(t.ready(200)).toBe(false);
    t.delta(delta(4, ['dave'], ['alice']), 201);
    // The snapshot at seq 3 (bob joined in the lost delta 2), in two parts, out of order.
    t.snapshotPart({ bus: 'A', seq: 3, part: 1, parts: 2, inboxes: ['carol'] }, 202);
    expect(t.ready(202)).toBe(false);
    t.snapshotPart({ bus: 'A', seq: 3, part: 1, parts: 2, inboxes: ['zed'] }, 202); // a duplicate part
    t.snapshotPart({ bus: 'A', seq: 3, part: 0, parts: 2, inboxes: ['alice', 'bob'] }, 203);
    expect(t.ready(203)).toBe(true);
    expect(['alice', 'bob', 'carol', 'dave', 'zed'].filter((u) => t.busesOf(u).length > 0)).toEqual(['bob', 'carol', 'dave']);
    t.delta(delta(5, ['erin']), 204);
    expect(t.busesOf('erin')).toEqual(['A']);
  });

  it('a heartbeat whose seq differs from the last delta applied asks for a snapshot', () => {
    const { t, asked } = table();
    t.delta(delta(1, ['alice']), 0);
    t.beat({ bus: 'A', seq: 1 }, 100);
    expect(asked).toEqual([]);
    t.beat({ bus: 'A', seq: 2 }, 200); // the last delta was lost
    expect(asked).toEqual(['A']);
    expect(t.ready(200)).toBe(false);
    // Unanswered: asked again on a heartbeat two periods later, not before.
    t.beat({ bus: 'A', seq: 2 }, 300);
    expect(asked).toEqual(['A']);
    t.beat({ bus: 'A', seq: 2 }, 400);
    expect(asked).toEqual(['A', 'A']);
    t.snapshotPart({ bus: 'A', seq: 2, part: 0, parts: 1, inboxes: [] }, 401);
    expect(t.ready(401)).toBe(true);
    expect(t.busesOf('alice')).toEqual([]);
  });

  it('a bus first heard by its heartbeat is read whole, unless it never held anyone', () => {
    const { t, asked } = table();
    t.beat({ bus: 'empty', seq: 0 }, 0);
    t.beat({ bus: 'busy', seq: 7 }, 0);
    t.delta(delta(4, ['x'], [], 'late'), 0);
    expect(asked).toEqual(['busy', 'late']);
    expect(t.ready(1_000)).toBe(false);
    t.snapshotPart({ bus: 'busy', seq: 7, part: 0, parts: 1, inboxes: ['alice'] }, 1);
    t.snapshotPart({ bus: 'late', seq: 3, part: 0, parts: 1, inboxes: ['bob'] }, 1);
    expect(t.ready(1_000)).toBe(true);
    expect([t.busesOf('alice'), t.busesOf('bob'), t.busesOf('x')]).toEqual([['busy'], ['late'], ['late']]);
  });

  it('forgets a bus that says goodbye, or that stops heartbeating (killed)', () => {
    const { t } = table();
    t.delta(delta(1, ['alice'], [], 'A'), 0);
    t.delta(delta(1, ['alice'], [], 'B'), 0);
    expect(t.busesOf('alice')).toEqual(['A', 'B']);
    expect(t.holdersOf(['alice', 'nobody'])).toEqual(
      new Map([
        ['A', ['alice']],
        ['B', ['alice']],
      ]),
    );
    expect(t.holdersOf(['alice'], 'B')).toEqual(new Map([['A', ['alice']]]));
    expect(t.holdersOf(['nobody']).size).toBe(0);
    t.bye('A');
    t.sweep(300);
    expect(t.busesOf('alice')).toEqual(['B']);
    t.sweep(351); // 3.5 periods without a word
    expect(t.busesOf('alice')).toEqual([]);
    expect(t.busCount).toBe(0);
  });

  it('distrusts itself for a grace period after a reconnect', () => {
    const { t } = table();
    expect(t.ready(500)).toBe(true);
    t.distrust(500);
    expect(t.ready(600)).toBe(false);
    expect(t.ready(650)).toBe(true);
  });

  it('whatever the network loses, duplicates or reorders, it matches its bus once it says it is ready after a heartbeat', () => {
    const op = fc.record({ user: fc.integer({ min: 0, max: 7 }), held: fc.boolean() });
    const fate = fc.constantFrom('deliver', 'deliver', 'lose', 'twice', 'late');
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(op, { maxLength: 4 }), fate), { maxLength: 30 }), (ticks) => {
        // The announcer: its set and its numbered deltas, as PresenceAnnouncer makes them.
        const held = new Set<string>();
        let seq = 0;
        const { t } = table();
        const late: PresenceDelta[] = [];
        const snapshot = () => t.snapshotPart({ bus: 'A', seq, part: 0, parts: 1, inboxes: [...held] }, 0);
        for (const [ops, outcome] of ticks) {
          const d = delta(seq + 1);
          for (const { user, held: on } of ops) {
            const u = `u${user}`;
            if (on && !held.has(u)) {
              held.add(u);
              d.add.push(u);
              d.del = d.del.filter((x) => x !== u);
            }
            if (!on && held.delete(u)) {
              d.del.push(u);
              d.add = d.add.filter((x) => x !== u);
            }
          }
          if (d.add.length + d.del.length === 0) continue;
          seq = d.seq;
          if (outcome === 'deliver' || outcome === 'twice') t.delta(d, 0);
          if (outcome === 'twice') t.delta(d, 0);
          if (outcome === 'late') late.push(d);
          if (late.length > 0 && outcome === 'deliver') t.delta(late.shift()!, 0);
        }
        for (const d of late) t.delta(d, 0);
        t.beat({ bus: 'A', seq }, 1_000);
        if (!t.ready(1_000)) snapshot();
        expect(t.ready(1_000)).toBe(true);
        for (let u = 0; u < 8; u++) expect(t.busesOf(`u${u}`).length > 0).toBe(held.has(`u${u}`));
      }),
      { numRuns: 500 },
    );
  });
});
