/**
 * An offline notification outlives a failing work queue (a NATS outage as its window closes):
 * its enqueue is retried under the same job id until the queue stores it — exactly one job
 * stored, also when a failed attempt had in fact stored it — and at close() each waiting
 * notification gets one last attempt, after which what was not stored is logged and counted,
 * without close() waiting on anything but those attempts. Items waiting for a retry count in
 * the memory bound. The queue is the embedded one over the real LMDB job store, behind a gate
 * that fails the attempts the test says.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalWorkQueue, type LocalWorkQueue } from '@seqline/bus';
import {
  inboxKey,
  resolveHooks,
  silentLogger,
  type Entry,
  type InboxKey,
  type JobEnqueue,
  type Logger,
  type WorkQueue,
} from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { eventually } from '@seqline/testing';
import { OFFLINE_NOTIFY_QUEUE, OfflineNotifier, type OfflineNotifyJob } from '../src/index.ts';

let root: string;
let engine: EmbeddedEngine;
let queue: LocalWorkQueue;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'seqline-notifier-retries-'));
  engine = await openEmbeddedEngine({ dir: root });
  // Not consumed: the jobs stay in the job store, where the test counts them.
  queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger });
});
afterAll(async () => {
  await queue.close();
  await engine.close();
  rmSync(root, { recursive: true, force: true });
});

/** How one enqueue attempt ends: refused (nothing stored), stored with its answer lost (a publish timing out after the server stored it), or stored. */
type Outcome = 'refused' | 'answer-lost' | 'stored';

/** The real queue behind a gate that decides each attempt's outcome by job id and attempt number (1, 2, …). */
class GatedQueue implements Pick<WorkQueue, 'enqueue'> {
  readonly attempts: string[] = [];
  constructor(public decide: (id: string, attempt: number) => Outcome) {}

  async enqueue(input: JobEnqueue): Promise<void> {
    const { id } = input;
    this.attempts.push(id);
    const outcome = this.decide(id, this.attemptsOf(id));
    if (outcome === 'refused') throw new Error('nats: timeout');
    await queue.enqueue(input);
    if (outcome === 'answer-lost') throw new Error('nats: timeout');
  }

  attemptsOf(id: string): number {
    return this.attempts.filter((a) => a === id).length;
  }
}

class ErrorLog implements Logger {
  readonly errors: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(obj: object, msg?: string): void {
    this.errors.push({ obj: obj as Record<string, unknown>, msg });
  }
  child(): Logger {
    return this;
  }
}

let tenants = 0;
function setup(gate: GatedQueue, options: { maxHeldItems?: number; windowMs?: number; retryMs?: number } = {}) {
  const tenant = `r${++tenants}`;
  const online = new Map<InboxKey, boolean>();
  const log = new ErrorLog();
  const retryMs = options.retryMs ?? 1;
  const notifier = new OfflineNotifier({
    queue: gate,
    hooks: { of: () => resolveHooks({}, { notifyUrl: 'http://127.0.0.1:9/n', notifyWindowMs: options.windowMs ?? 5 }) },
    presence: { isOnline: (i) => online.get(i) },
    logger: log,
    retryBackoff: { initialMs: retryMs, maxMs: 2 * retryMs },
    ...(options.maxHeldItems !== undefined && { maxHeldItems: options.maxHeldItems }),
  });
  const inbox = (user: string) => inboxKey(tenant, user);
  return { tenant, inbox, online, log, notifier };
}

let seq = 0;
const fromAlice = (): Entry => ({
  seq: ++seq,
  kind: 'msg',
  appinfo: `a${seq}`,
  conv: { type: 'user', id: 'alice' },
  from: 'alice',
  sendTime: 1,
});

async function storedJobs(tenant: string): Promise<Array<{ id: string; seqs: number[] }>> {
  const jobs = await engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE });
  return jobs
    .map((j) => ({ id: j.id, job: j.payload as unknown as OfflineNotifyJob }))
    .filter(({ job }) => job.tenant === tenant)
    .map(({ id, job }) => ({ id, seqs: job.entries.map((e) => e.seq) }));
}

describe('OfflineNotifier: a notification is kept until the queue stores it', () => {
  it('an enqueue failing 4 times (one of them after storing) is retried until stored: exactly one job, none lost', async () => {
    const plan: Outcome[] = ['refused', 'answer-lost', 'refused', 'refused'];
    const gate = new GatedQueue((_id, attempt) => plan[attempt - 1] ?? 'stored');
    const { tenant, inbox, notifier } = setup(gate);
    const entries = [fromAlice(), fromAlice()];
    notifier.listener(inbox('bob'), entries);
    await eventually(() => expect(notifier.stats().enqueued).toBe(1));
    const id = `offline-notify:${tenant}:bob:${entries[0]!.seq}:${entries.at(-1)!.seq}`;
    expect(gate.attempts).toEqual([id, id, id, id, id]);
    expect(await storedJobs(tenant)).toEqual([{ id, seqs: entries.map((e) => e.seq) }]);
    expect(notifier.stats()).toMatchObject({ open: 0, heldItems: 0, retrying: 0, enqueued: 1, enqueueFailures: 4, failed: 0 });
    await notifier.close();
  });

  it('while it waits its items count in the bound; past it, with no window to close, the oldest waiting one is given up, logged', async () => {
    let down = true;
    const gate = new GatedQueue(() => (down ? 'refused' : 'stored'));
    const { tenant, inbox, log, notifier } = setup(gate, { maxHeldItems: 3, retryMs: 60_000 });
    notifier.listener(inbox('u1'), [fromAlice(), fromAlice()]);
    await eventually(() => expect(notifier.stats()).toMatchObject({ open: 0, retrying: 1, heldItems: 2 }));
    // Two more items: u1's 2 waiting + 2 pass the bound of 3; no window to close, so u1's is given up.
    const u2 = [fromAlice(), fromAlice()];
    notifier.listener(inbox('u2'), u2);
    expect(notifier.stats()).toMatchObject({ open: 1, retrying: 0, heldItems: 2, failed: 1 });
    expect(log.errors).toEqual([
      { obj: expect.objectContaining({ tenant, user: 'u1', items: 2 }), msg: 'offline notification lost: given up at the bound' },
    ]);
    // The queue back: u2's window goes out at close.
    down = false;
    await notifier.close();
    expect(await storedJobs(tenant)).toEqual([
      { id: `offline-notify:${tenant}:u2:${u2[0]!.seq}:${u2.at(-1)!.seq}`, seqs: u2.map((e) => e.seq) },
    ]);
    expect(notifier.stats()).toMatchObject({ heldItems: 0, enqueued: 1, failed: 1 });
  });

  it('close() gives each waiting notification one last attempt, stores what it can, logs and counts the rest, and ends', async () => {
    const gate = new GatedQueue(() => 'stored');
    // bob's first attempt fails and the queue is back for him by close; carol's attempts all fail;
    // dave's window is still open at close and his only attempt fails. Retries are a minute off:
    // every attempt after the first is close()'s.
    const { tenant, inbox, log, notifier } = setup(gate, { retryMs: 60_000, windowMs: 60_000 });
    const [bob, carol, dave] = [fromAlice(), fromAlice(), fromAlice()];
    const idOf = (user: string, e: Entry) => `offline-notify:${tenant}:${user}:${e.seq}:${e.seq}`;
    gate.decide = (id, attempt) => (id === idOf('bob', bob) && attempt > 1 ? 'stored' : 'refused');
    notifier.listener(inbox('bob'), [bob]);
    notifier.listener(inbox('carol'), [carol]);
    await notifier.flush(); // both windows closed, their first attempts failed
    expect(notifier.stats()).toMatchObject({ open: 0, retrying: 2, heldItems: 2, enqueueFailures: 2 });
    notifier.listener(inbox('dave'), [dave]);
    expect(notifier.stats()).toMatchObject({ open: 1, heldItems: 3 });

    await notifier.close();
    expect([bob, carol, dave].map((e, i) => gate.attemptsOf(idOf(['bob', 'carol', 'dave'][i]!, e)))).toEqual([2, 2, 1]);
    expect(await storedJobs(tenant)).toEqual([{ id: idOf('bob', bob), seqs: [bob.seq] }]);
    expect(notifier.stats()).toMatchObject({ open: 0, retrying: 0, heldItems: 0, enqueued: 1, enqueueFailures: 4, failed: 2 });
    expect(log.errors.map((e) => [e.obj.user, e.obj.job, e.msg])).toEqual([
      ['dave', idOf('dave', dave), 'offline notification lost: not enqueued by close'],
      ['carol', idOf('carol', carol), 'offline notification lost: not enqueued by close'],
    ]);
  });

  it("a notification due for a retry whose user came online meanwhile is dropped, as at its window's close", async () => {
    const gate = new GatedQueue((_id, attempt) => (attempt === 1 ? 'refused' : 'stored'));
    const { tenant, inbox, online, notifier } = setup(gate, { retryMs: 60_000 });
    notifier.listener(inbox('bob'), [fromAlice()]);
    await eventually(() => expect(notifier.stats()).toMatchObject({ open: 0, retrying: 1 }));
    online.set(inbox('bob'), true);
    await notifier.close();
    expect(gate.attempts).toHaveLength(1);
    expect(await storedJobs(tenant)).toEqual([]);
    expect(notifier.stats()).toMatchObject({ retrying: 0, heldItems: 0, droppedOnline: 1, failed: 0 });
  });

  it('whatever the outages, the fill never passes the bound and every item is stored once, omitted, or in a notification logged lost', async () => {
    const step = fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.boolean());
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.array(step, { maxLength: 25 }), async (bound, steps) => {
        let down = false;
        const gate = new GatedQueue(() => (down ? 'refused' : 'stored'));
        const { tenant, inbox, log, notifier } = setup(gate, { maxHeldItems: bound, windowMs: 1 });
        const sent: number[] = [];
        for (const [user, count, queueDown] of steps) {
          down = queueDown;
          const entries = Array.from({ length: count }, fromAlice);
          notifier.listener(inbox(`u${user}`), entries);
          sent.push(...entries.map((e) => e.seq));
          expect(notifier.stats().heldItems).toBeLessThanOrEqual(bound);
          await new Promise((r) => setImmediate(r)); // attempts settle, windows and retries run
          expect(notifier.stats().heldItems).toBeLessThanOrEqual(bound);
        }
        down = false;
        await notifier.close();
        const stored = (await storedJobs(tenant)).flatMap((j) => j.seqs);
        const lostItems = log.errors.reduce((n, e) => n + (e.obj.items as number), 0);
        const { itemsOmitted, failed, heldItems, retrying, open } = notifier.stats();
        expect(new Set(stored).size).toBe(stored.length);
        expect(stored.every((s) => sent.includes(s))).toBe(true);
        expect(stored.length + itemsOmitted + lostItems).toBe(sent.length);
        expect(failed).toBe(log.errors.length);
        expect(log.errors.every((e) => e.msg === 'offline notification lost: given up at the bound')).toBe(true);
        expect({ heldItems, retrying, open }).toEqual({ heldItems: 0, retrying: 0, open: 0 });
      }),
      { numRuns: 60 },
    );
  });
});
