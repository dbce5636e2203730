import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createAdminTokenVerifier, createTokenVerifier, issueAdminToken, issueToken } from '@seqline/protocol';

const secret = 'test-secret-of-sufficient-length';
const verifyAdmin = createAdminTokenVerifier(secret);

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  return (err as { code?: string } | null)?.code;
}

describe('admin tokens', () => {
  it('round-trip: name and expiry', async () => {
    const token = await issueAdminToken({ secret, name: 'ops', ttlSeconds: 60 });
    const claims = await verifyAdmin(token);
    expect(claims.name).toBe('ops');
    expect(claims.expiresAt).toBeGreaterThan(Date.now());
  });

  it('a user token is FORBIDDEN (valid, but not an admin)', async () => {
    const token = await issueToken({ secret, user: 'admin', ttlSeconds: 60 });
    expect(await codeOf(verifyAdmin(token))).toBe('FORBIDDEN');
    // A hand-made token claiming the role with a user-looking subject is not an admin either.
    const forged = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    expect(await codeOf(verifyAdmin(forged))).toBe('FORBIDDEN');
  });

  it('an admin token is not a user token', async () => {
    const token = await issueAdminToken({ secret, ttlSeconds: 60 });
    expect(await codeOf(Promise.resolve().then(() => createTokenVerifier(secret)(token)))).toBe('UNAUTHORIZED');
  });

  it('garbage, a wrong secret and expiry are UNAUTHORIZED', async () => {
    expect(await codeOf(verifyAdmin(''))).toBe('UNAUTHORIZED');
    expect(await codeOf(verifyAdmin('not.a.jwt'))).toBe('UNAUTHORIZED');
    const otherSecret = await issueAdminToken({ secret: 'another-secret-of-enough-length', ttlSeconds: 60 });
    expect(await codeOf(verifyAdmin(otherSecret))).toBe('UNAUTHORIZED');
    const expired = await issueAdminToken({ secret, ttlSeconds: 60, now: Date.now() - 120_000 });
    expect(await codeOf(verifyAdmin(expired))).toBe('UNAUTHORIZED');
    const noneAlg = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'admin:x', role: 'admin', exp: 9e9 })).toString('base64url')}.`;
    expect(await codeOf(verifyAdmin(noneAlg))).toBe('UNAUTHORIZED');
  });

  it('refuses bad issue options', async () => {
    await expect(issueAdminToken({ secret, name: 'a:b', ttlSeconds: 60 })).rejects.toThrow(/invalid id/);
    await expect(issueAdminToken({ secret, ttlSeconds: 0 })).rejects.toThrow(/ttlSeconds/);
    await expect(issueAdminToken({ secret: 'short', ttlSeconds: 60 })).rejects.toThrow(/at least 16 bytes/);
  });
});
