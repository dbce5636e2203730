/**
 * Contract suite of the DeviceBus port (docs/protocol.md, "Devices and the login policy"). The
 * local bus (one process holds every session) runs the cases of one gateway; the NATS bus runs
 * them too, and those of several gateways on one network.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceBus, DeviceHolder, DisplaceOutcome, DisplaceRequest, DeviceSession, Logger, LoginPolicy } from '@seqline/core';
import { eventually, sleep, uniqueName } from './bus-harness.ts';
import { HolderDouble, recordingLogger } from './device-holder-double.ts';

export interface DeviceBusTestOptions {
  logger: Logger;
  answerWaitMs: number;
  maxWaitMs: number;
  /** A gateway whose network is down (NATS: a closed connection); the local bus has none. */
  offline?: boolean;
}

export interface RigGateway {
  bus: DeviceBus;
  /** Holds what this gateway sends for `ms` from now on (a slow network or a busy process). */
  delay(ms: number): void;
}

export interface DeviceBusRig {
  open(holder: DeviceHolder, options: DeviceBusTestOptions): Promise<RigGateway>;
  /** Several gateways on one network; absent where one process holds every session. */
  network?: {
    /** Resolves once `asker` trusts what it knows and sees `count` other gateways holding the user. */
    known(asker: DeviceBus, tenant: string, user: string, count: number): Promise<void>;
  };
  /** Closes what open() made besides the buses (connections, proxies). */
  cleanup(): Promise<void>;
}

const ios = { plat: 'ios' as const };

export function deviceBusContract(name: string, rig: DeviceBusRig): void {
  describe(`DeviceBus contract: ${name}`, () => {
    const buses: DeviceBus[] = [];
    afterEach(async () => {
      await Promise.all(buses.splice(0).map((bus) => bus.close()));
      await rig.cleanup();
    });
    const gateway = async (name: string, over: Partial<DeviceBusTestOptions> = {}) => {
      const holder = new HolderDouble(name);
      const logger = recordingLogger();
      const opened = await rig.open(holder, { logger, answerWaitMs: 1_000, maxWaitMs: 5_000, ...over });
      buses.push(opened.bus);
      return { holder, logger, ...opened };
    };
    const user = () => ({ tenant: uniqueName('t'), user: 'alice' });
    const request = (
      who: { tenant: string; user: string },
      incoming: DeviceSession,
      policy: LoginPolicy = 'one-per-platform',
    ): DisplaceRequest => ({
      ...who,
      policy,
      incoming,
    });
    /** `outcome`, and when it settled (performance.now()). */
    const timed = (outcome: Promise<DisplaceOutcome>) => outcome.then((value) => ({ value, at: performance.now() }));

    describe('one gateway', () => {
      it("displaces this gateway's own older sessions at once, before anything is sent, and resolves once they were told", async () => {
        const g = await gateway('g1');
        const who = user();
        g.bus.hold(who.tenant, who.user);
        const old = g.holder.add(who.tenant, who.user, { dev: 'phone-1', ...ios }).session;
        const web = g.holder.add(who.tenant, who.user, { plat: 'web' }).session;
        g.bus.hold(who.tenant, who.user);
        const login = g.holder.add(who.tenant, who.user, { dev: 'phone-2', ...ios });
        g.holder.mode = 'on-release';
        let settled = false;
        const outcome = g.bus.displace(request(who, login)).finally(() => (settled = true));
        expect(g.holder.kicked(old)).toBe(true); // synchronously: no network involved
        expect(g.holder.kicked(web)).toBe(false);
        expect(g.holder.kicked(login.session)).toBe(false);
        await sleep(100);
        expect(settled).toBe(false); // not told yet
        g.holder.release();
        expect(await outcome).toBe('told');
      });

      it('with the network down, the sessions of this gateway are still displaced, and the login is not held', async () => {
        const g = await gateway('g1', { offline: true });
        const who = user();
        g.bus.hold(who.tenant, who.user);
        const old = g.holder.add(who.tenant, who.user, ios).session;
        g.bus.hold(who.tenant, who.user);
        const login = g.holder.add(who.tenant, who.user, ios);
        const started = performance.now();
        const outcome = await g.bus.displace(request(who, login));
        expect(g.holder.kicked(old)).toBe(true);
        expect(g.holder.toldAt.has(old)).toBe(true);
        expect(['told', 'failed']).toContain(outcome);
        expect(performance.now() - started).toBeLessThan(1_000); // nothing to wait for
        expect(await g.bus.list(who.tenant, who.user)).toEqual([login]);
      });

      it('a kick that rejects is logged; the login resolves `failed`, never rejects', async () => {
        const g = await gateway('g1');
        const who = user();
        g.holder.add(who.tenant, who.user, ios);
        const login = g.holder.add(who.tenant, who.user, ios);
        g.holder.mode = 'reject';
        expect(await g.bus.displace(request(who, login))).toBe('failed');
        expect(g.logger.lines.some((l) => l.level === 'error')).toBe(true);
      });

      it('a kick that never tells ends at the bound (`bound`, logged)', async () => {
        const g = await gateway('g1', { maxWaitMs: 300 });
        const who = user();
        g.holder.add(who.tenant, who.user, ios);
        const login = g.holder.add(who.tenant, who.user, ios);
        g.holder.mode = 'never';
        const started = performance.now();
        expect(await g.bus.displace(request(who, login))).toBe('bound');
        expect(performance.now() - started).toBeGreaterThanOrEqual(290);
        expect(g.logger.lines.some((l) => l.level === 'warn')).toBe(true);
      });

      it('a holder that throws while picking: logged, `failed`, nothing kicked', async () => {
        const g = await gateway('g1');
        const who = user();
        const old = g.holder.add(who.tenant, who.user, ios).session;
        const login = g.holder.add(who.tenant, who.user, ios);
        g.holder.pick = () => {
          throw new Error('settings unreadable');
        };
        expect(await g.bus.displace(request(who, login))).toBe('failed');
        expect(g.holder.kicked(old)).toBe(false);
      });
    });

    const network = rig.network;
    if (network === undefined) return;

    describe('several gateways', () => {
      /** g1 (where logins come) and g2 holding an older ios session of the user, known to g1. */
      const twoGateways = async (over: Partial<DeviceBusTestOptions> = {}) => {
        const g1 = await gateway('g1', over);
        const g2 = await gateway('g2', over);
        const who = user();
        g2.bus.hold(who.tenant, who.user);
        const old = g2.holder.add(who.tenant, who.user, { dev: 'phone-1', ...ios }).session;
        g1.bus.hold(who.tenant, who.user);
        const login = g1.holder.add(who.tenant, who.user, { dev: 'phone-2', ...ios });
        await network.known(g1.bus, who.tenant, who.user, 1);
        return { g1, g2, who, old, login };
      };

      it('a gateway that answers after 300 ms is waited for: its session is told before the login resolves', async () => {
        const { g1, g2, who, old, login } = await twoGateways();
        g2.delay(300);
        const started = performance.now();
        const { value, at } = await timed(g1.bus.displace(request(who, login)));
        expect(value).toBe('told');
        expect(g2.holder.kicked(old)).toBe(true);
        expect(g2.holder.toldAt.get(old)).toBeLessThanOrEqual(at);
        expect(at - started).toBeGreaterThanOrEqual(300);
      });

      it('a remote session still draining is waited for until it was told', async () => {
        const { g1, g2, who, old, login } = await twoGateways();
        g2.holder.mode = 'on-release';
        let settled = false;
        const outcome = g1.bus.displace(request(who, login)).finally(() => (settled = true));
        await eventually(() => g2.holder.kicked(old));
        await sleep(100);
        expect(settled).toBe(false);
        g2.holder.release();
        expect(await outcome).toBe('told');
      });

      it('a gateway that presence says holds none of the user is not waited for', async () => {
        const g1 = await gateway('g1');
        const g2 = await gateway('g2');
        const who = user();
        const other = { tenant: who.tenant, user: 'bob' };
        g2.bus.hold(other.tenant, other.user);
        g2.holder.add(other.tenant, other.user, ios);
        g1.bus.hold(who.tenant, who.user);
        const login = g1.holder.add(who.tenant, who.user, ios);
        await network.known(g1.bus, other.tenant, other.user, 1); // presence trusted, g2 seen
        g2.delay(2_000);
        const started = performance.now();
        expect(await g1.bus.displace(request(who, login))).toBe('told');
        expect(performance.now() - started).toBeLessThan(1_000);
      });

      it('a gateway silent past the answer bound: the login resolves `bound` (logged); its late answer is still acted on', async () => {
        const { g1, g2, who, old, login } = await twoGateways({ answerWaitMs: 300, maxWaitMs: 5_000 });
        g2.delay(1_500);
        const started = performance.now();
        const { value, at } = await timed(g1.bus.displace(request(who, login)));
        expect(value).toBe('bound');
        expect(at - started).toBeGreaterThanOrEqual(290);
        expect(at - started).toBeLessThan(1_500); // not waiting for the late answer
        expect(g1.logger.lines.some((l) => l.level === 'warn')).toBe(true);
        await eventually(() => g2.holder.kicked(old)); // kicked all the same, after the login was served
      });

      it('a remote kick that rejects is logged there; the login resolves `failed`', async () => {
        const { g1, g2, who, old, login } = await twoGateways();
        g2.holder.mode = 'reject';
        expect(await g1.bus.displace(request(who, login))).toBe('failed');
        expect(g2.holder.kicked(old)).toBe(true);
        expect(g2.logger.lines.some((l) => l.level === 'error')).toBe(true);
      });

      it('two logins racing on two gateways: exactly one stays, whatever their clocks say', async () => {
        for (let round = 0; round < 5; round++) {
          const g1 = await gateway(`g1r${round}`);
          const g2 = await gateway(`g2r${round}`);
          const who = user();
          g1.bus.hold(who.tenant, who.user);
          g2.bus.hold(who.tenant, who.user);
          // Accept times from clocks a minute apart: they must not decide.
          const a = { ...g1.holder.add(who.tenant, who.user, ios), since: Date.now() + 60_000 };
          const b = { ...g2.holder.add(who.tenant, who.user, ios), since: Date.now() };
          await network.known(g1.bus, who.tenant, who.user, 1);
          await network.known(g2.bus, who.tenant, who.user, 1);
          await Promise.all([g1.bus.displace(request(who, a)), g2.bus.displace(request(who, b))]);
          expect([g1.holder.kicked(a.session), g2.holder.kicked(b.session)].filter(Boolean)).toHaveLength(1);
        }
      });

      it('lists the live sessions of every gateway holding the user, and only those', async () => {
        const { g1, who, old, login } = await twoGateways();
        const listed = await g1.bus.list(who.tenant, who.user);
        expect(listed.map((s) => s.session).sort()).toEqual([login.session, old].sort());
      });
    });
  });
}
