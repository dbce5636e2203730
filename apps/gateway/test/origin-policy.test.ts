/**
 * The gateway's Origin rule: a list allows exactly its origins; `'same-origin'` allows only a
 * page of the server itself (the Origin names the request's Host); undefined allows any.
 */
import { describe, expect, it } from 'vitest';
import { isSameOrigin, originPolicy } from '../src/origin-policy.ts';

describe('originPolicy', () => {
  it('a list: exactly its origins, compared case-insensitively without a trailing slash; the Host plays no part', () => {
    const policy = originPolicy(['https://app.example.com']);
    expect(policy.allows('https://APP.example.com/', 'gw.example.com')).toBe(true);
    expect(policy.allows('https://app.example.com', 'app.example.com')).toBe(true);
    expect(policy.allows('https://evil.example', 'evil.example')).toBe(false);
    expect(policy.allows('http://app.example.com', 'gw.example.com')).toBe(false);
  });

  it('an empty list allows no origin (the configs never produce one: they refuse such a value)', () => {
    expect(originPolicy([]).allows('http://localhost:8080', 'localhost:8080')).toBe(false);
  });

  it('undefined and "*" allow any origin', () => {
    for (const policy of [originPolicy(undefined), originPolicy(['https://a.example', '*'])]) {
      expect(policy.allows('https://evil.example', 'localhost:8080')).toBe(true);
    }
  });

  it("'same-origin': the page of this host and port only", () => {
    const policy = originPolicy('same-origin');
    expect(policy.allows('http://localhost:8080', 'localhost:8080')).toBe(true);
    expect(policy.allows('http://127.0.0.1:8080', '127.0.0.1:8080')).toBe(true);
    expect(policy.allows('https://chat.example.com', 'chat.example.com')).toBe(true); // TLS ended in front: the host decides
    expect(policy.allows('http://[::1]:8080', '[::1]:8080')).toBe(true);
    // another port, another host, a look-alike, no Host at all
    expect(policy.allows('http://localhost:3000', 'localhost:8080')).toBe(false);
    expect(policy.allows('http://127.0.0.1:8080', 'localhost:8080')).toBe(false);
    expect(policy.allows('http://localhost:8080.evil.example', 'localhost:8080')).toBe(false);
    expect(policy.allows('http://localhost:8080', undefined)).toBe(false);
  });
});

describe('isSameOrigin', () => {
  it.each([
    ['null', 'localhost:8080'],
    ['http://localhost:8080/', 'localhost:8080'], // a browser's Origin has no path
    ['http://localhost:8080/app', 'localhost:8080'],
    ['ws://localhost:8080', 'localhost:8080'],
    ['file://localhost:8080', 'localhost:8080'],
    ['http://user@localhost:8080', 'localhost:8080'],
    ['http://localhost:8080', 'localhost:8080/x'],
    ['http://localhost:8080', 'user@localhost:8080'],
    ['http://localhost:8080', ''],
    ['not a url', 'localhost:8080'],
  ])('%j sent to Host %j is not same-origin', (origin, host) => {
    expect(isSameOrigin(origin, host)).toBe(false);
  });
});
