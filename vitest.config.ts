import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'fakes/**/*.test.ts', 'test/**/*.test.ts', 'conformance/**/*.test.ts', 'spec/**/*.test.ts', 'bin/**/*.test.ts', 'explore/**/*.test.ts'],
    // npm run test:cluster runs it alone (test/cluster/vitest.config.ts): it needs haproxy and a quiet machine.
    // npm run test:operations runs test/operations (its own config): it starts Debian's prometheus.
    exclude: [...configDefaults.exclude, 'test/cluster/**', 'test/operations/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Real-backend suites share one Postgres/Redis/NATS; files isolate themselves by schema and subject.
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
