/** The small logger interface libraries take; apps pass pino (which satisfies it). */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

/** Injected clock so time rules (recall window, backoff) are testable. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
