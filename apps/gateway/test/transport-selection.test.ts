import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createGateway, createTokenVerifier, isNativeUws, loadNativeUws, uwsBinaryPath, UwsUnavailableError } from '../src/index.ts';
import { FakeMessaging } from './fake-messaging.ts';
import { memoryLogger, SECRET, TestClient, TRANSPORTS, UWS_LOADS } from './harness.ts';

const require = createRequire(import.meta.url);

function baseOptions() {
  return { port: 0, host: '127.0.0.1', messaging: new FakeMessaging(), verifyToken: createTokenVerifier(SECRET), logger: memoryLogger() };
}

describe.skipIf(!UWS_LOADS)('uWebSockets.js native binary', () => {
  it('loads natively on this machine (Node ABI binary present and working)', () => {
    const loaded = loadNativeUws();
    expect(loaded).toMatchObject({ ok: true, binary: uwsBinaryPath() });
    expect(uwsBinaryPath()).toMatch(new RegExp(`uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node$`));
  });

  it('tells the native addon from the package’s silent JS fallback', () => {
    expect(isNativeUws(require('uWebSockets.js'))).toBe(true);
    // What src/uws.js returns when the binary does not load (it only prints a console warning).
    const fallback: unknown = require('uWebSockets.js/dist/index.js');
    expect(typeof (fallback as { App?: unknown }).App).toBe('function');
    expect(isNativeUws(fallback)).toBe(false);
    expect(isNativeUws(null)).toBe(false);
    expect(isNativeUws({ App() {}, getParts() {}, us_listen_socket_close() {} })).toBe(false);
  });

  it('UWS_USE_FALLBACK counts as "native unavailable"', () => {
    const before = process.env['UWS_USE_FALLBACK'];
    process.env['UWS_USE_FALLBACK'] = 'true';
    try {
      expect(loadNativeUws()).toMatchObject({ ok: false, reason: expect.stringContaining('UWS_USE_FALLBACK') });
    } finally {
      if (before === undefined) delete process.env['UWS_USE_FALLBACK'];
      else process.env['UWS_USE_FALLBACK'] = before;
    }
  });
});

describe('createGateway transport choice', () => {
  it('defaults to the native uWS transport where its binary loads', async () => {
    const gateway = await createGateway(baseOptions());
    try {
      expect(gateway).toMatchObject(UWS_LOADS ? { transport: 'uws', native: true } : { transport: 'ws', native: false });
      expect(gateway.port).toBeGreaterThan(0);
    } finally {
      await gateway.close();
    }
  });

  it('transport "uws" refuses to start when the native binary is unavailable', async () => {
    const options = { ...baseOptions(), transport: 'uws' as const, loadUws: () => ({ ok: false as const, reason: 'no binary for test' }) };
    const err = await createGateway(options).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UwsUnavailableError);
    expect((err as Error).message).toMatch(/no binary for test/);
  });

  it('by default ("auto") runs on the ws package when no native binary loads (a newer Node), and says why', async () => {
    const options = { ...baseOptions(), loadUws: () => ({ ok: false as const, reason: 'no binary for test' }) };
    const gateway = await createGateway(options);
    try {
      expect(gateway).toMatchObject({ transport: 'ws', native: false });
      const chosen = options.logger.records.find((r) => r.msg?.startsWith('gateway transport') === true);
      expect(chosen?.obj).toMatchObject({ transport: 'ws', reason: 'no binary for test', nativeHelpers: true });
      const token = await (await import('../src/index.ts')).issueToken({ secret: SECRET, user: 'alice', ttlSeconds: 60 });
      const client = await TestClient.connect(`ws://127.0.0.1:${gateway.port}/v1/ws?token=${token}`);
      expect(await client.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
      await client.close();
    } finally {
      await gateway.close();
    }
  });

  it('transport "ws" is an explicit, logged choice', async () => {
    const options = { ...baseOptions(), transport: 'ws' as const };
    const gateway = await createGateway(options);
    try {
      expect(gateway).toMatchObject({ transport: 'ws', native: false });
      expect(options.logger.records.some((r) => r.level === 'info' && r.obj['transport'] === 'ws')).toBe(true);
    } finally {
      await gateway.close();
    }
  });

  it('refuses option values that native uWS would abort the process on', async () => {
    for (const idleTimeoutSeconds of [1, 5, 961, 1.5]) {
      await expect(createGateway({ ...baseOptions(), idleTimeoutSeconds })).rejects.toThrow(RangeError);
    }
    await expect(createGateway({ ...baseOptions(), port: 70_000 })).rejects.toThrow(RangeError);
    await expect(createGateway({ ...baseOptions(), maxBackpressureBytes: -1 })).rejects.toThrow(RangeError);
  });

  it('reports a port already in use', async () => {
    for (const transport of TRANSPORTS) {
      const first = await createGateway({ ...baseOptions(), transport });
      try {
        await expect(createGateway({ ...baseOptions(), transport, port: first.port })).rejects.toThrow();
      } finally {
        await first.close();
      }
    }
  });
});
