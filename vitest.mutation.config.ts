import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs against each mutant (stryker.config.mjs, README "Mutation testing"): the hermetic
 * tests that run the product in this process, so a mutant activated in the test worker is the code under
 * test. Left out: files that spawn an executable or a tool (a child process loads `src` afresh and never
 * sees the active mutant, so it could only report survivors), the real-backend suites, the process and
 * spawned conformance columns, and the night-long exploration (explore/).
 */
const SPAWNING = [
  'src/observability/log-destination.test.ts',
  'test/contracts/admin-cli.test.ts',
  'test/shutdown/**',
  'test/process/**',
  'test/observability/promtool.test.ts',
  'test/docs/**',
  'test/console/**',
  'test/deploy/**',
];

const ALL = [
  'src/**/*.test.ts',
  'fakes/**/*.test.ts',
  // The in-process fake columns: every transport and wire, the service in the test worker.
  'conformance/columns/*-fake-rest-http1.test.ts',
  'conformance/columns/*-fake-rest-h2c.test.ts',
  'conformance/columns/*-fake-grpc.test.ts',
  'test/**/*.test.ts',
];

/**
 * MUTATION_SET=core (stryker.config.mjs): the tests that reach src/domain, src/session and src/service from
 * inside the process: their unit tests, the error table and DTOs they feed, the metrics fed by the session
 * scope, and one REST and one gRPC fake conformance column (the service driven through a transport).
 */
const CORE_SET = [
  'src/domain/**/*.test.ts',
  'src/session/**/*.test.ts',
  'src/service/**/*.test.ts',
  'src/transports/errors/*.test.ts',
  'src/transports/http/rest/*.test.ts',
  'src/observability/backend-metrics.test.ts',
  'src/config/config-rules.test.ts',
  'conformance/columns/stdlib-fake-rest-http1.test.ts',
  'conformance/columns/grpc-fake-grpc.test.ts',
];

/**
 * MUTATION_TESTS (comma-separated globs) narrows the set for a quick run of one folder. Not Stryker's
 * --testFiles: with it, Stryker 10.1 activates a static mutant (a module-level value) only after the
 * module was loaded, and reports it survived whatever the tests say (stryker-js issue 6144).
 */
const narrowed =
  process.env['MUTATION_SET'] === 'core' ? CORE_SET : process.env['MUTATION_TESTS']?.split(',').filter((glob) => glob !== '');

export default defineConfig({
  test: {
    include: narrowed !== undefined && narrowed.length > 0 ? narrowed : ALL,
    exclude: [
      ...configDefaults.exclude,
      '**/*.real.test.ts',
      'test/cluster/**',
      'test/operations/**',
      'test/faults/**',
      'test/durability/**',
      'test/edge/**',
      ...SPAWNING,
    ],
    setupFiles: ['./test/support/hermetic-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
