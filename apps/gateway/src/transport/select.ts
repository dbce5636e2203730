/** Picks the transport: native uWS by default; `ws` only as an explicit, logged choice. */
import type { Logger } from '@seqline/core';
import { loadNativeUws, UwsUnavailableError, type UwsLoadResult } from './uws-loader.ts';
import { createUwsTransport } from './uws-transport.ts';
import { loadWs } from './ws-module.ts';
import { createWsTransport } from './ws-transport.ts';
import type { Transport, TransportHandlers, TransportLimits, TransportName } from './transport.ts';

export interface TransportChoice {
  transport?: TransportName;
  allowWsFallback?: boolean;
  logger: Logger;
  /** Replaceable in tests to simulate a platform without a usable binary. */
  loadUws?: () => UwsLoadResult;
}

export function createTransport<S>(choice: TransportChoice, handlers: TransportHandlers<S>, limits: TransportLimits): Transport {
  const requested = choice.transport ?? 'uws';
  if (requested === 'ws') {
    choice.logger.info({ transport: 'ws' }, 'gateway transport: ws package (explicitly chosen)');
    return createWsTransport(loadWs(), handlers, limits);
  }
  const loaded = (choice.loadUws ?? loadNativeUws)();
  if (loaded.ok) {
    choice.logger.info({ transport: 'uws', binary: loaded.binary }, 'gateway transport: native uWebSockets.js');
    return createUwsTransport(loaded.uws, handlers, limits, choice.logger);
  }
  if (!choice.allowWsFallback) throw new UwsUnavailableError(loaded.reason);
  choice.logger.warn(
    { transport: 'ws', reason: loaded.reason },
    'native uWebSockets.js unavailable: falling back to the ws package (allowWsFallback); expect lower throughput',
  );
  return createWsTransport(loadWs(), handlers, limits);
}
