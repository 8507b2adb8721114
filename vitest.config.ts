import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two suites, as vitest projects (README "Tests"):
 * - `fast` (npm test): hermetic. Fakes, PGlite and in-process servers only; it starts no backend server
 *   (postgres, redis-server, nats-server) and reads no backend variable (test/support/hermetic-setup.ts
 *   removes them from every worker). Time the service owns is simulated; platform timeouts run with short
 *   values the harness passes in composition.
 * - `real` and then `real-alone` (npm run test:real): the machine's (or the containers') PostgreSQL, Redis and NATS named by
 *   POSTGRES_DSN, REDIS_ADDR and NATS_URL, which it requires (test/support/require-real-backends.ts): the
 *   conformance matrix's real column, the adapters' contracts, faults on private servers, durability,
 *   the fleet, the edge attacks and the platform timeouts at their production values, waited out.
 * A file belongs to `real` when it is in one of the folders below or is named `*.real.test.ts`.
 */
const ROOTS = ['src', 'fakes', 'test', 'conformance', 'spec', 'bin', 'explore', 'examples', 'scripts'];
const REAL = [
  '**/*.real.test.ts',
  'conformance/columns/*-real*.test.ts',
  'test/faults/**/*.test.ts',
  'test/durability/**/*.test.ts',
  'test/edge/**/*.test.ts',
  // Real browsers and process-group signal runs: tens of seconds of real time each (the console's test
  // also starts each executable on the real backends to see its 404).
  'test/console/**/*.test.ts',
  'test/process/stop-signal-once.test.ts',
];
/**
 * Real-backend files that restart executables and servers under paced load and poll for their recovery:
 * run after the others, one at a time (project `real-alone`), so a crowded machine does not starve them.
 */
const REAL_ALONE = ['test/faults/outbox-fleet.test.ts', 'test/durability/**/*.test.ts'];
// npm run test:cluster runs it alone (test/cluster/vitest.config.ts): it needs haproxy and a quiet machine.
// npm run test:operations runs test/operations (its own config): it starts Debian's prometheus.
const EXCLUDE = [...configDefaults.exclude, 'test/cluster/**', 'test/operations/**'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Every file starts its own servers on port 0 and its own fakes: files share nothing and run side by side.
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ROOTS.map((root) => `${root}/**/*.test.ts`),
          exclude: [...EXCLUDE, ...REAL],
          setupFiles: ['./test/support/hermetic-setup.ts'],
          // Most files wait on sockets and child processes more than they compute: more workers than the
          // two cores CI machines have keeps both busy.
          maxWorkers: 3,
          // Guards against hangs only (nothing here waits on them): generous, because a CI machine shared
          // with other jobs can run a spawned executable's start-up or Chromium's launch many times slower.
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'real',
          include: REAL,
          exclude: [...EXCLUDE, ...REAL_ALONE],
          globalSetup: ['./test/support/require-real-backends.ts'],
          // Real backends are shared by every file (each isolates itself by schema, key prefix and subject);
          // the fault files start private servers of their own. Run after `fast` when one command selects
          // both (npm run conformance:report): vitest runs projects with other worker counts in separate groups.
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'real-alone',
          include: REAL_ALONE,
          exclude: EXCLUDE,
          globalSetup: ['./test/support/require-real-backends.ts'],
          sequence: { groupOrder: 2 },
          maxWorkers: 1,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
