/**
 * Loads the native uWebSockets.js binary, never its silent fallback.
 *
 * The Truffle build (`@trufflesuite/uws-js-unofficial`, aliased as `uWebSockets.js`) decides in
 * `src/uws.js`: when `UWS_USE_FALLBACK` is set, or when
 * `require('../binaries/uws_<platform>_<arch>_<abi>.node')` throws, it prints a warning and
 * returns `dist/index.js`, a JS re-implementation on top of `ws` with the same API — slow, and
 * nothing tells the caller. So we require the binary ourselves (same path), and also check that
 * what we got is native code, so the fallback can never pass for uWS.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as uws from 'uWebSockets.js';

export type UwsModule = typeof uws;

export type UwsLoadResult = { ok: true; uws: UwsModule; binary: string } | { ok: false; reason: string };

/** Thrown at startup when the native uWS binary cannot be used and no fallback was allowed. */
export class UwsUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(
      `uWebSockets.js native binary unavailable (${reason}). Refusing to start on its slow JS fallback; ` +
        'set allowWsFallback (or choose transport "ws") to run on the ws package instead.',
    );
    this.name = 'UwsUnavailableError';
  }
}

const require = createRequire(import.meta.url);

export function uwsBinaryPath(): string {
  const packageDir = dirname(require.resolve('uWebSockets.js/package.json'));
  return join(packageDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
}

/** True only for the native addon: its App is a C++ function, the fallback's is JavaScript. */
export function isNativeUws(candidate: unknown): candidate is UwsModule {
  if (typeof candidate !== 'object' || candidate === null) return false;
  const mod = candidate as Record<string, unknown>;
  return (
    typeof mod['App'] === 'function' &&
    typeof mod['getParts'] === 'function' &&
    typeof mod['us_listen_socket_close'] === 'function' &&
    Function.prototype.toString.call(mod['App']).includes('[native code]')
  );
}

export function loadNativeUws(): UwsLoadResult {
  const flag = process.env['UWS_USE_FALLBACK'];
  if (flag && ['1', 'true'].includes(flag.toLowerCase())) {
    return { ok: false, reason: 'UWS_USE_FALLBACK is set' };
  }
  let binary: string;
  let loaded: unknown;
  try {
    binary = uwsBinaryPath();
    loaded = require(binary);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { ok: false, reason: `no binary for ${process.platform}-${process.arch} ABI ${process.versions.modules}: ${message}` };
  }
  if (!isNativeUws(loaded)) return { ok: false, reason: `${binary} did not load as a native addon` };
  return { ok: true, uws: loaded, binary };
}
