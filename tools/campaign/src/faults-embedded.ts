/**
 * Faults of the embedded server: kill -9 and restart (anywhere, inside a conversation rebuild,
 * inside a group fanout), a jump of its wall clock, and a 30-minute outage (kill -9, the world's
 * clock moved 31 minutes on, restart: what was accepted before must still be delivered).
 */
import type { FaultActions, FaultOutcome } from './nemesis.ts';
import type { RoundPlan } from './plan.ts';
import { admin, type Clocks } from './system.ts';
import type { EmbeddedSystem } from './system-embedded.ts';

export const OUTAGE_MS = 31 * 60_000;

/** Another number in [0, 1) from a fault's one random number. */
export const frac = (r: number, k: number): number => (r * k) % 1;

export function embeddedFaults(sys: EmbeddedSystem, clocks: Clocks, plan: RoundPlan): FaultActions {
  /** Runs `f` with the server to itself; null (skipped) when another fault holds it. */
  const exclusive = async (f: () => Promise<FaultOutcome>): Promise<FaultOutcome | null> => {
    if (sys.busy) return null;
    sys.busy = true;
    try {
      return await f();
    } finally {
      sys.busy = false;
    }
  };
  const kill = (r: number, detail: string) =>
    exclusive(async () => {
      await sys.killAndRestart(Math.floor(r * 800));
      return { target: 'server', detail };
    });
  const actions: Partial<FaultActions> = {
    kill9: (r) => kill(r, 'kill -9, restart'),
    'kill9-fanout': (r) => kill(r, 'kill -9 right after a group send was acknowledged'),
    'kill9-rebuild': (r) =>
      exclusive(async () => {
        const user = plan.online[Math.floor(r * plan.online.length)] as string;
        const rebuild = admin(sys, clocks, 'POST', `/conversations/${sys.tenant}/${user}/rebuild`).catch(() => undefined);
        const delay = Math.floor(frac(r, 7919) * 40);
        await new Promise((res) => setTimeout(res, delay));
        await sys.killAndRestart(Math.floor(frac(r, 104729) * 300));
        await rebuild;
        return { target: 'server', detail: `kill -9 ${delay} ms into a rebuild of ${user}'s conversations` };
      }),
    'clock-jump': async (r) => {
      const jump = Math.round((r < 0.5 ? -1 : 1) * (20_000 + r * 100_000));
      await clocks.set('server', jump);
      await new Promise((res) => setTimeout(res, 1000 + Math.floor(frac(r, 7919) * 4000)));
      await clocks.set('server', 0);
      return { target: 'server', detail: `wall clock ${jump > 0 ? '+' : ''}${jump} ms, then back` };
    },
    outage30: async () => {
      // The round's one outage waits for the server instead of being skipped.
      for (const bound = Date.now() + 60_000; sys.busy && Date.now() < bound;) await new Promise((res) => setTimeout(res, 50));
      return exclusive(async () => {
        await sys.server.kill9();
        await clocks.advanceWorld(OUTAGE_MS, ['server']);
        await sys.server.start();
        return { target: 'server', detail: 'kill -9, 31 simulated minutes down, restart' };
      });
    },
  };
  return actions as FaultActions;
}
