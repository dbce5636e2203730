/**
 * The displacement protocol of the device bus (core's device-bus.ts), modelled on two gateways
 * with the core rules it runs on: pick (displacedSessions, on the sessions a gateway holds when
 * it handles the request), kick only while the login is live, and sparedInCrossing. Two logins
 * race in every order the network allows: exactly one of two conflicting logins stays, and
 * every older session in a surviving login's slot goes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displacedSessions, LOGIN_POLICIES, PLATFORMS, sparedInCrossing, type DeviceSlot, type LoginPolicy } from '../src/index.ts';

type Gateway = 'g1' | 'g2';
interface ModelSession extends DeviceSlot {
  gateway: Gateway;
  present: boolean;
  kicked: boolean;
}
type Step = 'accept' | 'pick' | 'reply' | 'kick';
const STEPS: Step[] = ['accept', 'pick', 'reply', 'kick'];

/** Runs two logins (L on g1, S on g2) against older sessions, steps interleaved by `choices`. */
function race(policy: LoginPolicy, older: ModelSession[], logins: [ModelSession, ModelSession], choices: number[]) {
  const all = [...older, ...logins];
  const live = (gateway: Gateway) => all.filter((s) => s.gateway === gateway && s.present && !s.kicked);
  const isLive = (s: ModelSession) => s.present && !s.kicked;
  const picked = new Map<string, string[]>();
  const asked = new Map<string, Set<string>>();
  const committed = new Set<string>();
  const next = new Map(logins.map((l) => [l.session, 0]));
  const other = (g: Gateway): Gateway => (g === 'g1' ? 'g2' : 'g1');
  const run = (login: ModelSession, step: Step) => {
    if (step === 'accept') {
      login.present = true;
      // Here, at once: every session this gateway holds came first.
      for (const s of displacedSessions(policy, live(login.gateway), login)) s.kicked = true;
    } else if (step === 'pick') {
      picked.set(
        login.session,
        displacedSessions(policy, live(other(login.gateway)), login).map((s) => s.session),
      );
    } else if (step === 'reply') {
      const sessions = picked.get(login.session) ?? [];
      if (!isLive(login) || sessions.length === 0) return;
      asked.set(login.session, new Set(sessions));
      committed.add(login.session);
    } else if (committed.has(login.session)) {
      for (const id of picked.get(login.session) ?? []) {
        const target = all.find((s) => s.session === id);
        if (target && isLive(target) && !sparedInCrossing(id, login.session, asked.get(id))) target.kicked = true;
      }
    }
  };
  for (const choice of choices) {
    const enabled = logins.filter((l) => (next.get(l.session) ?? 4) < STEPS.length);
    if (enabled.length === 0) break;
    const login = enabled[choice % enabled.length]!;
    const step = next.get(login.session)!;
    run(login, STEPS[step]!);
    next.set(login.session, step + 1);
  }
  for (const login of logins) {
    for (let step = next.get(login.session) ?? STEPS.length; step < STEPS.length; step++) run(login, STEPS[step]!);
  }
  return { picked };
}

const slot = fc.record({
  dev: fc.option(fc.constantFrom('d1', 'd2', 'd3'), { nil: undefined }),
  plat: fc.option(fc.constantFrom(...PLATFORMS), { nil: undefined }),
});
const clean = <T extends object>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

describe('displacement protocol on two gateways (model)', () => {
  it('property: of two conflicting logins exactly one stays; older sessions in a survivor’s slot go', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LOGIN_POLICIES),
        fc.array(fc.tuple(slot, fc.constantFrom<Gateway>('g1', 'g2')), { maxLength: 5 }),
        slot,
        slot,
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 7, maxLength: 7 }),
        fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
        (policy, rawOlder, slotL, slotS, ids, choices) => {
          const older = rawOlder.map(([device, gateway], i): ModelSession => ({
            ...clean(device),
            session: ids[i]!,
            gateway,
            present: true,
            kicked: false,
          }));
          const L: ModelSession = { ...clean(slotL), session: ids[5]!, gateway: 'g1', present: false, kicked: false };
          const S: ModelSession = { ...clean(slotS), session: ids[6]!, gateway: 'g2', present: false, kicked: false };
          const { picked } = race(policy, older, [L, S], choices);

          expect(L.kicked && S.kicked).toBe(false);
          if (picked.get(L.session)?.includes(S.session) || picked.get(S.session)?.includes(L.session)) {
            expect(L.kicked || S.kicked).toBe(true);
          }
          for (const survivor of [L, S].filter((l) => !l.kicked)) {
            for (const o of older) if (displacedSessions(policy, [o], survivor).length > 0) expect(o.kicked).toBe(true);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('sparedInCrossing', () => {
  it('spares a target only when its own login asked to kick the incoming one, and has the greater id', () => {
    expect(sparedInCrossing('b', 'a', new Set(['a']))).toBe(true);
    expect(sparedInCrossing('a', 'b', new Set(['b']))).toBe(false);
    expect(sparedInCrossing('b', 'a', new Set(['x']))).toBe(false);
    expect(sparedInCrossing('b', 'a', undefined)).toBe(false);
  });

  it('property: of two crossed kicks, exactly one target is spared', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1 }), { minLength: 2, maxLength: 2 }), ([x, y]) => {
        const spared = [sparedInCrossing(x!, y!, new Set([y!])), sparedInCrossing(y!, x!, new Set([x!]))];
        expect(spared.filter(Boolean)).toHaveLength(1);
      }),
    );
  });
});
