/** The `k6` module: check, fail, sleep, group. */
import type { Tags } from '../protocol.ts';
import { blockFor, runtime } from '../vu/runtime.ts';

type Checker<T> = ((value: T) => unknown) | boolean;

/** Runs each named check on `value`; each adds a point to the `checks` rate. True if all passed. */
export function check<T>(value: T, checks: Record<string, Checker<T>>, tags?: Tags): boolean {
  let all = true;
  for (const [name, checker] of Object.entries(checks)) {
    const ok = Boolean(typeof checker === 'function' ? checker(value) : checker);
    runtime.emit('checks', 'rate', 'default', ok ? 1 : 0, { ...tags, check: name });
    all &&= ok;
  }
  return all;
}

/** Aborts the iteration (or setup/teardown) with `message`, like k6's fail(). */
export function fail(message = ''): never {
  throw new Error(message);
}

/** Blocks the VU for `seconds`. */
export function sleep(seconds: number): void {
  blockFor(seconds * 1000);
}

export function group<T>(_name: string, fn: () => T): T {
  return fn();
}

export default { check, fail, sleep, group };
