/**
 * Why a hook call failed. Not protocol errors: the queue retries them (notify, after-send) or
 * the before-send failure mode turns them into a client's answer.
 */
export class HookUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HookUnreachableError';
  }
}

/** The hook answered, but not with a 2xx. */
export class HookRejectedError extends Error {
  constructor(readonly status: number) {
    super(`hook answered HTTP ${status}`);
    this.name = 'HookRejectedError';
  }
}
