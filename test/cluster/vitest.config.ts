import { defineConfig } from 'vitest/config';

/**
 * npm run test:cluster (scripts/test-cluster.ts): the cluster suite on its own, never inside `npm test`,
 * whose parallel forks would starve the rate measurement and which does not require haproxy.
 */
export default defineConfig({
  test: {
    root: new URL('../../', import.meta.url).pathname,
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
