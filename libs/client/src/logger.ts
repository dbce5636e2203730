/** The logger the SDK takes; pino and the @seqline/core Logger satisfy it. */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentClientLogger: ClientLogger = { debug() {}, info() {}, warn() {}, error() {} };
