/** Exit codes of seqline-admin, and the errors that carry them up to main. */
export const EXIT = {
  ok: 0,
  /** The operation failed (server error, not found, refused token, …). */
  failure: 1,
  /** Bad command line or values the server rejected as invalid. */
  usage: 2,
  /** The server (or the database, for `schema migrate`) could not be reached. */
  unreachable: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, EXIT.unreachable);
  }
}

/** The admin API answered with an error (`{"ok": false, "error": {code, message}}`). */
export class ServerError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    // Values the server found invalid are the caller's input: a usage error.
    super(message, code === 'BAD_REQUEST' && status === 400 ? EXIT.usage : EXIT.failure);
  }
}
