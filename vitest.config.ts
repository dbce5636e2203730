import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['libs/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
