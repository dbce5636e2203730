import { defineConfig } from 'vitest/config';

/**
 * Three projects, run in sequence by `npm test`:
 * - `unit`: everything else, files in parallel;
 * - `heavy`: the large-group suites (2 000–12 000 members, a 10 000-socket swarm), the flood tests and the
 *   kill -9 crash test, and the k6 scripts against a server, one file at a time — on 2 cores
 *   they starve each other in parallel;
 * - `faults`: tests that kill or restart the shared services (Cassandra, Redis, NATS), one
 *   file at a time and last, so no other suite sees the outage.
 */
const HEAVY = [
  'apps/server/test/large-groups.*.test.ts',
  'apps/server/test/crash.e2e.test.ts',
  'apps/server/test/conversations.crash.e2e.test.ts',
  'apps/server/test/loadtest.k6.test.ts',
  'apps/worker/test/loadtest.k6.test.ts',
  // They measure another user's sync p99 under a flood: a ratio that other files running beside them would skew.
  'apps/server/test/bad-frame-flood.hostile.test.ts',
  'apps/worker/test/gateway-abuse.hostile.test.ts',
  // `npm start` as the README says: the README's port, and a build that rewrites dist/ (nothing may run beside it).
  'apps/demo/test/first-ten-minutes.test.ts',
];
const shared = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' as const };
/**
 * Workspace packages resolve to their TypeScript sources (the `source` export condition), so
 * tests never need a build and never see a stale dist/. Vitest runs node tests in Vite's ssr
 * environment; the list replaces Vite's default server conditions, so those are repeated.
 */
const sourceFirst = { ssr: { resolve: { conditions: ['source', 'module', 'node', 'development|production'] } } };

export default defineConfig({
  test: {
    projects: [
      {
        ...sourceFirst,
        test: {
          ...shared,
          name: 'unit',
          include: ['libs/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
          exclude: ['**/*.fault.test.ts', '**/node_modules/**', ...HEAVY],
        },
      },
      {
        ...sourceFirst,
        test: {
          ...shared,
          name: 'heavy',
          include: HEAVY,
          fileParallelism: false,
          testTimeout: 180_000,
        },
      },
      {
        ...sourceFirst,
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
