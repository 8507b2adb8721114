import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_HANG_GUARD_MS } from './test/support/eventually.ts';
import { MatrixFirstSequencer } from './test/support/matrix-first-sequencer.ts';

/**
 * Two suites, as vitest projects (docs/testing.md):
 * - `fast` (npm test): hermetic. Fakes, PGlite and in-process servers only; it starts no backend server
 *   (postgres, redis-server, nats-server) and reads no backend variable (test/support/hermetic-setup.ts
 *   removes them from every worker). Time the service owns is simulated; platform timeouts run with short
 *   values the harness passes in composition.
 * - `real` with `browser`, and then `real-alone` (npm run test:real): the machine's (or the containers')
 *   PostgreSQL, Redis and NATS named by POSTGRES_DSN, REDIS_ADDR and NATS_URL, which `real` requires
 *   (test/support/require-real-backends.ts): the conformance matrix's real column, the adapters' contracts,
 *   faults on private servers, durability, the fleet, the edge attacks, the console in headless Chromium and
 *   the platform timeouts at their production values, waited out; `browser` is the docs page in headless
 *   Chromium, which needs no backend.
 * A file belongs to `real` when it is in one of the folders below or is named `*.real.test.ts`.
 */
const ROOTS = ['src', 'speed', 'packages', 'fakes', 'embedded', 'test', 'conformance', 'spec', 'bin', 'explore', 'examples', 'scripts'];
const REAL = [
  '**/*.real.test.ts',
  'conformance/columns/*-real*.test.ts',
  'test/faults/**/*.test.ts',
  'test/durability/**/*.test.ts',
  'test/edge/**/*.test.ts',
  // Process-group signal runs: tens of seconds of real time each.
  'test/process/stop-signal-once.test.ts',
];
/**
 * Headless Chromium: tens of CPU-seconds and of real time per file, more than the hermetic suite's whole
 * budget on two cores. The docs page needs no backend (project `browser`, run by npm run test:real and
 * npm run docs:screenshot); what it shows in the browser is checked over HTTP on every REST column of the
 * fast suite (conformance/cases/docs-page.ts: SWAGGER-page, SWAGGER-csp, SWAGGER-offline-fallback,
 * SWAGGER-assets). The console's test also starts each executable on the real backends to see its 404.
 */
const BROWSER = ['test/docs/docs-page.test.ts'];
const REAL_BROWSER = ['test/console/**/*.test.ts'];
/**
 * Real-backend files that restart executables and servers under paced load and poll for their recovery:
 * run after the others, one at a time (project `real-alone`), so a crowded machine does not starve them.
 */
const REAL_ALONE = ['test/faults/outbox-fleet.test.ts', 'test/durability/**/*.test.ts'];
// npm run test:cluster runs it alone (test/cluster/vitest.config.ts): it needs haproxy and a quiet machine.
// npm run test:operations runs test/operations (its own config): it starts Debian's prometheus.
// .stryker-tmp: a mutation run's sandboxes are copies of the repo, whose *.real.test.ts files '**' would match.
const EXCLUDE = [...configDefaults.exclude, 'test/cluster/**', 'test/operations/**', '.stryker-tmp/**'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Every file starts its own servers on port 0 and its own fakes: files share nothing and run side by side.
    pool: 'forks',
    sequence: { sequencer: MatrixFirstSequencer },
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ROOTS.map((root) => `${root}/**/*.test.ts`),
          exclude: [...EXCLUDE, ...REAL, ...BROWSER, ...REAL_BROWSER],
          setupFiles: ['./test/support/hermetic-setup.ts'],
          // Two workers, one per core of the 2-core machines it runs on. Each worker imports the service anew
          // (~1.6 s of CPU), so a third costs CPU: back to back on a shared machine (load 1.4-4.5), two used
          // 50-56 s of CPU and three 54-67 s (four pairs: -0.5 to +14 s for three, ~4 s typical), before the
          // cuts of reports/test-suite.md. Two take longer in wall time (~55 s against ~45 s idle): the files
          // mostly wait on sockets and spawned processes, which a third worker overlaps.
          // Two once failed three HTTP/2 guard cases of the grpc/grpc column in a fresh clone: an earlier file
          // of the same worker had left a dead fake setInterval on globalThis (http2-limits.test.ts, fixed;
          // test/support/hermetic-setup.ts now fails such a hand-over at once), not the worker count.
          maxWorkers: 2,
          // A worker runs file after file in one process and imports the service's modules once, instead
          // of a fresh process per file re-importing them (about a third of the suite's CPU). Files share
          // no state: each starts its own servers on port 0, builds its own registries and loggers, and
          // puts back what it fakes (vi.useRealTimers in a finally).
          isolate: false,
          // Guards against hangs only (every wait is for a condition, under HANG_GUARD_MS): generous, because
          // a CI machine shared with other jobs runs a spawned executable's start-up many times slower.
          testTimeout: TEST_HANG_GUARD_MS,
          hookTimeout: TEST_HANG_GUARD_MS,
        },
      },
      {
        extends: true,
        test: {
          name: 'real',
          include: [...REAL, ...REAL_BROWSER],
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
          name: 'browser',
          include: BROWSER,
          exclude: EXCLUDE,
          // Beside `real` (same group and worker count), after `fast` when one command selects both.
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
