import { defineConfig } from 'vitest/config';

/**
 * Three projects, run in sequence by `npm test`:
 * - `unit`: everything else, files in parallel;
 * - `heavy`: the large-group suites (2 000–12 000 members, a 10 000-socket swarm) and the
 *   kill -9 crash test, and the k6 scripts against a server, one file at a time — on 2 cores
 *   they starve each other in parallel;
 * - `faults`: tests that kill or restart the shared services (Cassandra, Redis, NATS), one
 *   file at a time and last, so no other suite sees the outage.
 */
const HEAVY = ['apps/server/test/large-groups.*.test.ts', 'apps/server/test/crash.e2e.test.ts', 'apps/server/test/loadtest.k6.test.ts', 'apps/worker/test/loadtest.k6.test.ts'];
const shared = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['libs/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
          exclude: ['**/*.fault.test.ts', '**/node_modules/**', ...HEAVY],
        },
      },
      {
        test: {
          ...shared,
          name: 'heavy',
          include: HEAVY,
          fileParallelism: false,
          testTimeout: 180_000,
        },
      },
      {
        test: {
          ...shared,
          name: 'faults',
          include: ['libs/*/test/**/*.fault.test.ts', 'apps/*/test/**/*.fault.test.ts'],
          fileParallelism: false,
          testTimeout: 300_000,
        },
      },
    ],
  },
});
