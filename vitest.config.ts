import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (everything, files in parallel) and `faults` — tests that kill or
 * restart the shared services (Cassandra, Redis, NATS). Those run one file at a time, after
 * the rest (`npm test` runs the projects in sequence), so no other suite sees the outage.
 */
const shared = { testTimeout: 30_000, hookTimeout: 120_000, pool: 'forks' as const };

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['libs/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
          exclude: ['**/*.fault.test.ts', '**/node_modules/**'],
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
