/**
 * Picks the transport. `auto` (the default): native uWebSockets.js where its binary loads, else
 * the `ws` package — logged either way, never a refusal to start. `uws` insists on the native
 * binary (refuses to start without it); `ws` is the explicit choice.
 */
import type { Logger } from '@seqline/core';
import { loadNativeUws, UwsUnavailableError, type UwsLoadResult } from './uws-loader.ts';
import { createUwsTransport } from './uws-transport.ts';
import { loadWs, wsHasNativeHelpers } from './ws-module.ts';
import { createWsTransport } from './ws-transport.ts';
import type { Transport, TransportChoiceName, TransportHandlers, TransportLimits } from './transport.ts';

export interface TransportChoice {
  transport?: TransportChoiceName;
  logger: Logger;
  /** Replaceable in tests to simulate a platform without a usable binary. */
  loadUws?: () => UwsLoadResult;
}

export function createTransport<S>(choice: TransportChoice, handlers: TransportHandlers<S>, limits: TransportLimits): Transport {
  const requested = choice.transport ?? 'auto';
  if (requested === 'ws') {
    choice.logger.info({ transport: 'ws' }, 'gateway transport: ws package (explicitly chosen)');
    return createWsTransport(loadWs(), handlers, limits);
  }
  const loaded = (choice.loadUws ?? loadNativeUws)();
  if (loaded.ok) {
    choice.logger.info({ transport: 'uws', binary: loaded.binary }, 'gateway transport: native uWebSockets.js');
    return createUwsTransport(loaded.uws, handlers, limits, choice.logger);
  }
  if (requested === 'uws') throw new UwsUnavailableError(loaded.reason);
  choice.logger.info(
    { transport: 'ws', reason: loaded.reason, nativeHelpers: wsHasNativeHelpers() },
    'gateway transport: ws package (no native uWebSockets.js binary for this runtime)',
  );
  return createWsTransport(loadWs(), handlers, limits);
}
