import { ConfigError, type Logger } from '@seqline/core';

export interface Stoppable {
  close(): Promise<void>;
}

/**
 * Runs a started process until SIGTERM/SIGINT, then closes it (stop accepting, finish
 * in-flight work, close stores) and exits 0 — or 1 when the shutdown itself fails.
 */
export function stopOnSignals(proc: Stoppable, logger: Logger & { flush?: () => void }): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight work');
    // Holds the event loop until close() settles: a step that waits on nothing Node counts (an
    // unref'd timer, a bare promise) would otherwise let the process exit 0 half-way through
    // the shutdown, before the notification windows and the queue are flushed.
    const holdOpen = setInterval(() => undefined, 60_000);
    proc.close().then(
      () => {
        clearInterval(holdOpen);
        logger.info({}, 'stopped');
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        clearInterval(holdOpen);
        logger.error({ err }, 'shutdown failed');
        logger.flush?.();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Prints a start-up failure (config errors as plain text) and exits 1. */
export function failStart(err: unknown): never {
  const text = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`seqline failed to start: ${text}\n`);
  process.exit(1);
}
