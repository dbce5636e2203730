import { describe, it } from 'vitest';

export type ServiceProbe = { ok: true } | { ok: false; reason: string };

/**
 * The one rule for suites that need real services: when `probe` failed, register a single
 * test named `what` that is skipped (saying why and how to start the service) — or, with
 * REQUIRE_SERVICES=1 as in CI, that FAILS — and return false; callers register their suites
 * only when this returns true. So a missing service never passes silently in CI.
 */
export function requireServices(
  probe: ServiceProbe,
  what: string,
  needs: string,
  hint = 'start them with bash scripts/services.sh up',
): boolean {
  if (probe.ok) return true;
  const required = process.env.REQUIRE_SERVICES === '1';
  if (!required) process.stderr.write(`[seqline tests] ${what} skipped: ${probe.reason} (${hint})\n`);
  describe(what, () => {
    if (required)
      it(`needs ${needs} (REQUIRE_SERVICES=1)`, () => {
        throw new Error(probe.reason);
      });
    else it.skip(`skipped: ${probe.reason}; ${hint}`, () => {});
  });
  return false;
}
