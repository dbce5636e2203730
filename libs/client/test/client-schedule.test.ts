/**
 * The "no sync skip" promise end to end, over a real socket: under a random schedule of pushes
 * (some skipped, duplicated, withheld and released out of order, stale or overlapping slices),
 * syncs, slow sync replies and dropped connections, the app sees every inbox entry exactly
 * once, ascending, and at every moment what it has seen is a prefix of the inbox.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../src/index.ts';
import { testClient, waitFor } from './support/helpers.ts';
import { ScriptedServer } from './support/scripted-server.ts';

type Action =
  | { t: 'append'; n: number; push: 'normal' | 'skip' | 'dup' | 'hold' }
  | { t: 'release' }
  | { t: 'slice'; from: number; len: number }
  | { t: 'sync' }
  | { t: 'wait'; ms: number }
  | { t: 'kick' };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('append' as const),
      n: fc.integer({ min: 1, max: 4 }),
      push: fc.constantFrom('normal' as const, 'normal' as const, 'skip' as const, 'dup' as const, 'hold' as const),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ t: 'release' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('slice' as const), from: fc.nat(60), len: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 2, arbitrary: fc.constant({ t: 'sync' as const }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'kick' as const }) },
);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('push and sync schedule', () => {
  it('delivers exactly the inbox: once, ascending, never past a gap', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 6 }),
        async (actions, syncDelays, pageLimit) => {
          const server = await ScriptedServer.start();
          let d = 0;
          server.syncDelayMs = () => syncDelays[d++ % syncDelays.length]!;
          server.seqStep = () => 1 + (d % 2);
          const client = testClient(server, { syncPageLimit: pageLimit, requestTimeoutMs: 1000 });
          const seen: Entry[] = [];
          const violations: string[] = [];
          client.on('entries', (batch) => {
            seen.push(...batch);
            const want = server.inbox.slice(0, seen.length).map((e) => e.seq);
            const got = seen.map((e) => e.seq);
            if (want.join() !== got.join()) violations.push(`saw [${got}] but inbox starts [${want}]`);
          });
          const held: Array<{ prevSeq: number; entries: Entry[] }> = [];
          try {
            await client.connect();
            for (const a of actions) {
              switch (a.t) {
                case 'append': {
                  const push = server.append(a.n);
                  if (a.push === 'normal' || a.push === 'dup') server.push(push.prevSeq, push.entries);
                  if (a.push === 'dup') server.push(push.prevSeq, push.entries);
                  if (a.push === 'hold') held.push(push);
                  break;
                }
                case 'release':
                  for (const p of held.splice(0).reverse()) server.push(p.prevSeq, p.entries);
                  break;
                case 'slice': {
                  const from = Math.min(a.from, server.inbox.length);
                  const entries = server.inbox.slice(from, from + a.len);
                  if (entries.length > 0) server.push(server.inbox[from - 1]?.seq ?? 0, entries);
                  break;
                }
                case 'sync':
                  client.syncNow().catch(() => undefined); // may fail on a kick; the reconnect syncs
                  break;
                case 'wait':
                  await sleep(a.ms);
                  break;
                case 'kick':
                  server.kick();
                  break;
              }
            }
            for (const p of held.splice(0).reverse()) server.push(p.prevSeq, p.entries);
            // Catch up: a sync that starts now must bring everything.
            for (;;) {
              await waitFor(() => client.connected, 'reconnect');
              try {
                await client.syncNow();
                break;
              } catch {
                // a kicked socket failed this sync; wait for the next connection
              }
            }
            await sleep(5); // let late pushes arrive: they must change nothing
            expect(violations).toEqual([]);
            expect(seen.map((e) => e.seq)).toEqual(server.inbox.map((e) => e.seq));
            expect(client.maxSeq).toBe(server.headSeq);
          } finally {
            client.close();
            await server.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
