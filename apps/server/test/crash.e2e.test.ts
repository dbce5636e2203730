/**
 * I1–I3 under crashes: the real server process is SIGKILLed and restarted several times while
 * senders keep sending (resending unacknowledged messages with the same appinfo, as the SDK
 * does) and tailers keep syncing by max seq. Afterwards: every inbox strictly increasing, every
 * acknowledged message exactly once in each recipient inbox, and no tailer skipped an entry.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { findSkips, isStrictlyIncreasing } from '@seqline/core';
import { ChildServer, freePort } from './child-server.ts';
import { TestClient, waitFor, type WireEntry } from './harness.ts';

const SENDERS = 4;
const RECIPIENTS = 3;
const KILLS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connectRetry(url: string, user: string, stop: () => boolean): Promise<TestClient | undefined> {
  while (!stop()) {
    try {
      return await TestClient.connect(url, user);
    } catch {
      await sleep(50);
    }
  }
  return undefined;
}

/** A call that fails (instead of hanging) when the connection dies. */
async function callOrFail(c: TestClient, op: string, args: Record<string, unknown>, ms = 3000) {
  let onClose: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      c.call(op, args),
      new Promise<never>((_, rej) => {
        onClose = () => rej(new Error('closed'));
        c.ws.once('close', onClose);
        timer = setTimeout(() => rej(new Error('timeout')), ms);
      }),
    ]);
  } finally {
    if (onClose) c.ws.off('close', onClose);
    clearTimeout(timer);
  }
}

// Two threads: the inboxes spread over both owners, a send crosses threads, and the kill takes every thread at once.
const RUNS = [
  { threads: 1, kills: KILLS },
  { threads: 2, kills: 2 },
];

describe.each(RUNS)('crash safety (kill -9 during sends), $threads thread(s)', ({ threads, kills }) => {
  let server: ChildServer | undefined;
  let dataDir = '';
  afterAll(async () => {
    await server?.terminate();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`keeps I1–I3 across ${kills} SIGKILLs with ${SENDERS} senders × ${RECIPIENTS} recipients`, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'seqline-crash-'));
    server = new ChildServer(await freePort(), dataDir, { SEQLINE_THREADS: String(threads) });
    await server.start();
    const srv = server;
    let done = false;
    const acked = new Map<string, string>(); // appinfo → recipient
    const received = new Map<string, WireEntry[]>();
    // Where each loop and the test are, printed if the test fails (a hang says where it hangs).
    const progress = { phase: 'sending', loops: new Map<string, string>() };
    onTestFailed(() => {
      const loops = [...progress.loops].map(([name, at]) => `${name}=${at}`).join(' ');
      console.log(
        `crash test: failed during ${progress.phase}; acked=${acked.size}; loops: ${loops}\nserver output (tail):\n${srv.output.slice(-3000)}`,
      );
    });

    const sender = async (i: number) => {
      let k = 0;
      let pending: { appinfo: string; to: string } | undefined;
      let c: TestClient | undefined;
      while (!done) {
        progress.loops.set(`sender${i}`, 'connecting');
        c ??= await connectRetry(srv.url, `sender${i}`, () => done);
        if (!c) break;
        pending ??= { appinfo: `s${i}-${k++}`, to: `rcpt${k % RECIPIENTS}` };
        try {
          progress.loops.set(`sender${i}`, `sending ${pending.appinfo}`);
          const r = await callOrFail(c, 'send', { appinfo: pending.appinfo, to: { user: pending.to }, type: 'text', body: { k } });
          if (r.ok) {
            acked.set(pending.appinfo, pending.to);
            pending = undefined;
          }
        } catch {
          c.close();
          c = undefined; // resend the same appinfo after reconnecting
        }
      }
      c?.close();
      progress.loops.set(`sender${i}`, 'done');
    };

    const tailer = async (r: number) => {
      const user = `rcpt${r}`;
      const got: WireEntry[] = [];
      received.set(user, got);
      let c: TestClient | undefined;
      while (!done) {
        progress.loops.set(user, 'connecting');
        c ??= await connectRetry(srv.url, user, () => done);
        if (!c) break;
        try {
          progress.loops.set(user, 'syncing');
          const res = await callOrFail(c, 'sync', { maxSeq: got.at(-1)?.seq ?? 0, limit: 100 });
          if (res.ok) got.push(...(res as unknown as { entries: WireEntry[] }).entries);
          await sleep(5);
        } catch {
          c.close();
          c = undefined;
        }
      }
      c?.close();
      progress.loops.set(user, 'done');
    };

    const loops = [...Array.from({ length: SENDERS }, (_, i) => sender(i)), ...Array.from({ length: RECIPIENTS }, (_, r) => tailer(r))];
    for (let kill = 0; kill < kills; kill++) {
      await sleep(1200 + Math.random() * 600);
      progress.phase = `kill ${kill + 1}`;
      await srv.kill9();
      await sleep(100);
      progress.phase = `restart ${kill + 1}`;
      await srv.start();
      progress.phase = 'sending';
    }
    await sleep(1000);
    done = true;
    progress.phase = 'stopping the loops';
    await Promise.all(loops);
    progress.phase = 'checking the inboxes';

    // Let resumed fanout jobs finish, then check every recipient inbox.
    let lost = 0;
    let duplicated = 0;
    let regressions = 0;
    let skips = 0;
    for (let r = 0; r < RECIPIENTS; r++) {
      const user = `rcpt${r}`;
      const c = await TestClient.connect(srv.url, user);
      const expected = [...acked].filter(([, to]) => to === user).map(([a]) => a);
      const inbox = await waitFor(
        async () => {
          const all = await c.syncAll();
          const have = new Set(all.map((e) => e.appinfo));
          return expected.every((a) => have.has(a)) ? all : undefined;
        },
        20_000,
        `acknowledged messages in ${user}`,
      ).catch(async () => c.syncAll());
      const seqs = inbox.map((e) => e.seq);
      if (!isStrictlyIncreasing(seqs)) regressions += 1;
      const counts = new Map<string, number>();
      for (const e of inbox) counts.set(e.appinfo, (counts.get(e.appinfo) ?? 0) + 1);
      lost += expected.filter((a) => !counts.has(a)).length;
      duplicated += [...counts.values()].filter((n) => n > 1).length;
      // The tailer, caught up to the end, must have seen exactly the inbox.
      const got = received.get(user) ?? [];
      const tail = await c.syncAll(got.at(-1)?.seq ?? 0);
      const seen = [...got, ...tail].map((e) => e.seq);
      skips += findSkips(seen, seqs).length;
      if (!isStrictlyIncreasing(seen)) regressions += 1;
      c.close();
    }
    console.log(`crash test: acked=${acked.size} lost=${lost} duplicated=${duplicated} regressions=${regressions} skips=${skips}`);
    expect(acked.size).toBeGreaterThan(50);
    expect({ lost, duplicated, regressions, skips }).toEqual({ lost: 0, duplicated: 0, regressions: 0, skips: 0 });

    expect(await srv.terminate()).toBe(0);
  }, 120_000);
});
