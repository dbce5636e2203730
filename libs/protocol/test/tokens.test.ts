import { describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT } from 'jose';
import { createTokenVerifier, DEFAULT_TENANT, issueToken, parseTtl, readRequestToken, type TokenClaims } from '@seqline/protocol';

const secret = 'test-secret-of-sufficient-length';
const verify = createTokenVerifier(secret);

/** The verifier is synchronous (see TokenVerifier): it throws. */
async function rejection(verifying: () => TokenClaims) {
  const err = await Promise.resolve()
    .then(verifying)
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(err).toMatchObject({ code: 'UNAUTHORIZED' });
  return err as Error;
}

describe('tokens', () => {
  it('round-trips user and tenant', async () => {
    const token = await issueToken({ secret, user: 'alice', tenant: 'acme', ttlSeconds: 60 });
    const claims = verify(token);
    expect(claims).toMatchObject({ user: 'alice', tenant: 'acme' });
    expect(claims.expiresAt).toBeGreaterThan(Date.now());
  });

  it('a token without tid belongs to the default tenant', async () => {
    const token = await issueToken({ secret, user: 'alice', ttlSeconds: 60 });
    expect(verify(token).tenant).toBe(DEFAULT_TENANT);
    const raw = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('bob')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    expect(verify(raw)).toMatchObject({ user: 'bob', tenant: 'default' });
  });

  it('rejects expired tokens (beyond the clock tolerance)', async () => {
    const token = await issueToken({ secret, user: 'alice', ttlSeconds: 60, now: Date.now() - 120_000 });
    expect((await rejection(() => verify(token))).message).toBe('token expired');
  });

  it('honours an injected clock', async () => {
    const token = await issueToken({ secret, user: 'alice', ttlSeconds: 60 });
    const later = createTokenVerifier(secret, { clock: { now: () => Date.now() + 3_600_000 } });
    await rejection(() => later(token));
  });

  it('rejects a wrong secret, a tampered payload, alg none and garbage without echoing the token', async () => {
    const other = await issueToken({ secret: 'another-secret-of-enough-length', user: 'alice', ttlSeconds: 60 });
    expect((await rejection(() => verify(other))).message).toBe('invalid token');

    const token = await issueToken({ secret, user: 'alice', ttlSeconds: 60 });
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'admin', tid: 'acme', exp: 9_999_999_999 })).toString('base64url');
    const err = await rejection(() => verify(`${header}.${forged}.${signature}`));
    expect(err.message).not.toContain(forged);

    const unsecured = new UnsecuredJWT({ tid: 'acme' }).setSubject('alice').setExpirationTime('1h').encode();
    await rejection(() => verify(unsecured));
    await rejection(() => verify('not-a-jwt'));
    await rejection(() => verify(''));
  });

  it('requires exp and a valid sub / tid', async () => {
    const key = new TextEncoder().encode(secret);
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').sign(key);
    await rejection(() => verify(noExp));
    const badSub = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('t:alice').setExpirationTime('1h').sign(key);
    await rejection(() => verify(badSub));
    const badTid = await new SignJWT({ tid: 7 }).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('1h').sign(key);
    await rejection(() => verify(badTid));
  });

  it('refuses short secrets and invalid ids at issue time', async () => {
    expect(() => createTokenVerifier('short')).toThrow(/at least 16 bytes/);
    await expect(issueToken({ secret: 'short', user: 'a', ttlSeconds: 1 })).rejects.toThrow(/at least 16 bytes/);
    await expect(issueToken({ secret, user: 'a:b', ttlSeconds: 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(issueToken({ secret, user: 'a', tenant: '', ttlSeconds: 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(issueToken({ secret, user: 'a', ttlSeconds: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('readRequestToken', () => {
  it('prefers the Authorization header, falls back to the token query parameter', () => {
    expect(readRequestToken('Bearer abc', 'token=xyz')).toBe('abc');
    expect(readRequestToken('bearer   abc ', '')).toBe('abc');
    expect(readRequestToken(undefined, 'a=1&token=xyz')).toBe('xyz');
    expect(readRequestToken('Basic dXNlcg==', 'token=xyz')).toBe('xyz');
    expect(readRequestToken(undefined, '')).toBeUndefined();
  });
});

describe('parseTtl', () => {
  it.each([
    ['3600', 3600],
    ['90s', 90],
    ['15m', 900],
    ['24h', 86_400],
    ['7d', 604_800],
  ])('%s → %i', (text, seconds) => {
    expect(parseTtl(text)).toBe(seconds);
  });
  it.each(['', '0', '-5', '1w', 'h', '1.5h'])('rejects %j', (text) => {
    expect(() => parseTtl(text)).toThrow(/ttl/);
  });
});
