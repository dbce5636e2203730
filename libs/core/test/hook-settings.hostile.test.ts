import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  applyHooksPatch,
  BadRequestError,
  DEFAULT_HOOKS,
  redactHooks,
  resolveHooks,
  validateHooksPatch,
  validateTenantHooks,
} from '../src/index.ts';

const SECRET = 'sixteen-chars-ok!';

describe('hook settings', () => {
  it('resolves built-in defaults ← process defaults ← tenant override', () => {
    const resolved = resolveHooks({ notifyUrl: 'https://a.example/n', loginPolicy: 'one' }, { loginPolicy: 'one-per-platform' });
    expect(resolved).toEqual({ ...DEFAULT_HOOKS, notifyUrl: 'https://a.example/n', loginPolicy: 'one-per-platform' });
    expect(resolveHooks({}, undefined)).toEqual(DEFAULT_HOOKS);
  });

  it('an empty URL switches a hook off for one tenant, over a process default', () => {
    const override = validateTenantHooks({ afterSendUrl: '' });
    expect(resolveHooks({ afterSendUrl: 'https://a.example/e' }, override).afterSendUrl).toBeUndefined();
    expect(resolveHooks({ afterSendUrl: 'https://a.example/e' }, {}).afterSendUrl).toBe('https://a.example/e');
  });

  it('a null in a patch clears the key back to the default', () => {
    const stored = validateTenantHooks({ notifyUrl: 'https://a.example/n', secret: SECRET });
    const next = applyHooksPatch(stored, validateHooksPatch({ notifyUrl: null }));
    expect(next).toEqual({ secret: SECRET });
  });

  it.each([
    [{ nope: 1 }, 'unknown setting'],
    [{ notifyUrl: 'ftp://x.example/' }, 'http(s)'],
    [{ notifyUrl: 'not a url' }, 'not a URL'],
    [{ notifyUrl: 'https://user:pw@x.example/' }, 'credentials'],
    [{ notifyUrl: 'https://x.example/' + 'a'.repeat(3000) }, 'not a URL'],
    [{ secret: 'short' }, 'secret'],
    [{ secret: 42 }, 'secret'],
    [{ notifyWindowMs: -1 }, 'notifyWindowMs'],
    [{ notifyWindowMs: 1.5 }, 'notifyWindowMs'],
    [{ beforeSendTimeoutMs: 0 }, 'beforeSendTimeoutMs'],
    [{ beforeSendTimeoutMs: '100' }, 'beforeSendTimeoutMs'],
    [{ beforeSendFailure: 'maybe' }, 'beforeSendFailure'],
    [{ sendPolicy: 'friends' }, 'sendPolicy'],
    [{ loginPolicy: 'two' }, 'loginPolicy'],
    [{ notifyPreview: 'yes' }, 'notifyPreview'],
    [[], 'an object'],
    ['x', 'an object'],
    [null, 'an object'],
  ])('refuses %j with a typed error naming the setting', (input, fragment) => {
    let error: unknown;
    try {
      validateHooksPatch(input);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toContain(fragment);
  });

  it('never echoes a secret, valid or not', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 600 }), (secret) => {
        try {
          validateHooksPatch({ secret });
        } catch (err) {
          return secret.length < 4 || !(err as Error).message.includes(secret);
        }
        return true;
      }),
    );
  });

  it('redaction shows everything but the secret', () => {
    const shown = redactHooks({ secret: SECRET, notifyUrl: 'https://a.example/n' });
    expect(shown).toEqual({ notifyUrl: 'https://a.example/n', secretSet: true });
    expect(JSON.stringify(redactHooks(resolveHooks({ secret: SECRET }, undefined)))).not.toContain(SECRET);
    expect(redactHooks({}).secretSet).toBe(false);
  });
});
