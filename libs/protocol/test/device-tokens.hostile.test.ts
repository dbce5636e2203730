import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier, encodeKicked, issueToken } from '@seqline/protocol';

const secret = 'test-secret-of-sufficient-length';
const verify = createTokenVerifier(secret);
const key = new TextEncoder().encode(secret);

const signed = (claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('1h').sign(key);

describe('device claims in tokens', () => {
  it('returns dev and plat when present and valid; none when absent (v1 tokens)', async () => {
    const token = await issueToken({ secret, user: 'alice', tenant: 'acme', ttlSeconds: 60, dev: 'phone-1', plat: 'ios' });
    expect(verify(token)).toMatchObject({ user: 'alice', tenant: 'acme', dev: 'phone-1', plat: 'ios' });
    const plain = verify(await issueToken({ secret, user: 'alice', ttlSeconds: 60 }));
    expect(plain).not.toHaveProperty('dev');
    expect(plain).not.toHaveProperty('plat');
  });

  it.each([
    [{ dev: 'has space' }],
    [{ dev: '' }],
    [{ dev: 7 }],
    [{ dev: 'x'.repeat(65) }],
    [{ plat: 'windows' }],
    [{ plat: 'IOS' }],
    [{ plat: null }],
    [{ plat: ['ios'] }],
  ])('refuses a signed token with invalid %j as UNAUTHORIZED', async (claims) => {
    const token = await signed(claims);
    expect(() => verify(token)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
  });

  it('refuses a forged token (wrong key) carrying a device', async () => {
    const forged = await new SignJWT({ dev: 'phone', plat: 'ios' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-of-enough-length'));
    expect(() => verify(forged)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
  });

  it('will not sign an invalid device', async () => {
    await expect(issueToken({ secret, user: 'alice', ttlSeconds: 60, dev: 'a b' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('encodeKicked', () => {
  it('names the new device, leaving absent fields out', () => {
    expect(JSON.parse(encodeKicked({ dev: 'p2', plat: 'ios' }))).toEqual({ op: 'kicked', by: { dev: 'p2', plat: 'ios' } });
    expect(JSON.parse(encodeKicked({}))).toEqual({ op: 'kicked', by: {} });
  });
});
