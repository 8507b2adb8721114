import { defineConfig } from 'vitest/config';

/**
 * npm run test:operations (scripts/test-operations.ts): the operators' pack (deploy/prometheus,
 * deploy/grafana) against Debian's prometheus, never inside `npm test`: it starts external binaries.
 */
export default defineConfig({
  test: {
    root: new URL('../../', import.meta.url).pathname,
    include: ['test/operations/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
