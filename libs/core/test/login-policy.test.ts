import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  displacedSessions,
  LOGIN_POLICIES,
  loginClock,
  parseDevice,
  PLATFORMS,
  type DeviceSession,
  type IncomingDevice,
  type Platform,
} from '../src/index.ts';

const session = (id: string, since: number, dev?: string, plat?: Platform): DeviceSession => ({
  session: id,
  since,
  gateway: 'g1',
  ...(dev !== undefined ? { dev } : {}),
  ...(plat !== undefined ? { plat } : {}),
});
const ids = (list: DeviceSession[]) => list.map((s) => s.session).sort();

describe('displacedSessions', () => {
  const live = [session('a', 1, 'phone1', 'ios'), session('b', 2, 'tab', 'web'), session('c', 3, 'pc', 'desktop'), session('d', 4)];
  const incoming = (over: IncomingDevice): IncomingDevice => ({ session: 'z', ...over });

  it('all displaces nobody, even the same device', () => {
    expect(displacedSessions('all', live, incoming({ dev: 'phone1', plat: 'ios' }))).toEqual([]);
  });

  it('one-per-platform displaces the same platform and the same device only', () => {
    expect(ids(displacedSessions('one-per-platform', live, incoming({ dev: 'phone2', plat: 'ios' })))).toEqual(['a']);
    expect(ids(displacedSessions('one-per-platform', live, incoming({ dev: 'x', plat: 'android' })))).toEqual([]);
    // The same device under another platform name still replaces its older socket.
    expect(ids(displacedSessions('one-per-platform', live, incoming({ dev: 'tab', plat: 'desktop' })))).toEqual(['b', 'c']);
  });

  it('one-per-platform: a session without a platform is displaced only by one (or its own device)', () => {
    expect(ids(displacedSessions('one-per-platform', live, incoming({})))).toEqual([]);
    expect(ids(displacedSessions('one', live, incoming({})))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('one displaces every older session but never the incoming one', () => {
    const withSelf = [...live, session('z', 10, 'me', 'ios')];
    expect(ids(displacedSessions('one', withSelf, incoming({ dev: 'me', plat: 'ios' })))).toEqual(['a', 'b', 'c', 'd']);
  });

  it('compares no clocks: whatever `since` says, every other session the gateway holds is older', () => {
    // Held when the login's request is handled = accepted before it, even on a clock running ahead.
    const ahead = [session('y', 99_999, 'p', 'ios'), session('a', 10, 'q', 'ios'), session('zz', 10, 'r', 'web')];
    expect(ids(displacedSessions('one', ahead, incoming({ plat: 'ios' })))).toEqual(['a', 'y', 'zz']);
    expect(ids(displacedSessions('one-per-platform', ahead, incoming({ plat: 'ios' })))).toEqual(['a', 'y']);
  });

  const arbSession = fc.record({
    session: fc.string({ minLength: 1, maxLength: 4 }),
    since: fc.integer({ min: 0, max: 20 }),
    gateway: fc.constant('g'),
    dev: fc.option(fc.constantFrom('d1', 'd2', 'd3'), { nil: undefined }),
    plat: fc.option(fc.constantFrom(...PLATFORMS), { nil: undefined }),
  });
  const clean = (s: DeviceSession): DeviceSession => JSON.parse(JSON.stringify(s)) as DeviceSession;

  it('property: a subset of live, never the incoming one; all ⊆ one-per-platform ⊆ one; no clock decides', () => {
    fc.assert(
      fc.property(fc.array(arbSession, { maxLength: 8 }), arbSession, fc.constantFrom(...LOGIN_POLICIES), (raw, rawIn, policy) => {
        const live = raw.map(clean);
        const incoming = clean(rawIn);
        const out = displacedSessions(policy, live, incoming);
        for (const s of out) expect(live).toContain(s);
        expect(out.every((s) => s.session !== incoming.session)).toBe(true);
        const perPlat = new Set(displacedSessions('one-per-platform', live, incoming));
        const one = new Set(displacedSessions('one', live, incoming));
        for (const s of perPlat) expect(one.has(s)).toBe(true);
        if (policy === 'all') expect(out).toEqual([]);
        // No clock decides: shuffling every `since` changes nothing.
        const shuffled = live.map((s, i) => ({ ...s, since: live[(i + 1) % live.length]?.since ?? 0 }));
        expect(ids(displacedSessions(policy, shuffled, incoming))).toEqual(ids(out));
      }),
    );
  });

  it('property: a web login never displaces an ios session of another device under one-per-platform', () => {
    fc.assert(
      fc.property(fc.array(arbSession, { maxLength: 8 }), (raw) => {
        const live = raw.map(clean).map((s) => ({ ...s, plat: 'ios' as const, dev: 'phone' }));
        expect(displacedSessions('one-per-platform', live, { dev: 'browser', plat: 'web', session: 'new' })).toEqual([]);
      }),
    );
  });
});

describe('loginClock', () => {
  it('property: strictly increasing whatever the wall clock does (same ms, backwards), and never behind it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 200 }), (walls) => {
        let i = 0;
        const clock = loginClock(() => walls[i] ?? 0);
        const stamps = walls.map((_, k) => ((i = k), clock()));
        stamps.forEach((stamp, k) => {
          expect(stamp).toBeGreaterThanOrEqual(walls[k] ?? 0);
          if (k > 0) expect(stamp).toBeGreaterThan(stamps[k - 1] ?? 0);
        });
      }),
    );
  });
});

describe('parseDevice', () => {
  it('keeps valid values, leaves absent ones out', () => {
    expect(parseDevice('phone-1', 'ios', 'token')).toEqual({ dev: 'phone-1', plat: 'ios' });
    expect(parseDevice(undefined, undefined, 'token')).toEqual({});
  });

  it.each([
    ['', undefined],
    ['a b', undefined],
    ['x'.repeat(65), undefined],
    [42, undefined],
    [undefined, 'IOS'],
    [undefined, 'windows'],
    [undefined, ['ios']],
  ])('refuses dev %j plat %j with BAD_REQUEST', (dev, plat) => {
    expect(() => parseDevice(dev, plat, 'url')).toThrow(BadRequestError);
  });
});
