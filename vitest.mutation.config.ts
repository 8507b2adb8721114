import { configDefaults, defineConfig } from 'vitest/config';
import { chosenSet, SETS } from './mutation-sets.ts';

/**
 * The tests Stryker runs against each mutant (stryker.config.mjs, docs/mutation-testing.md): the hermetic
 * tests that run the product in this process, so a mutant activated in the test worker is the code under
 * test. Left out: files that spawn an executable or a tool (a child process loads `src` afresh and never
 * sees the active mutant, so it could only report survivors), the real-backend suites (but for a set that
 * asks for them), the process and spawned conformance columns, and the night-long exploration (explore/).
 * Which of the rest run is the set's choice (mutation-sets.ts, MUTATION_SET).
 */
const SPAWNING = [
  'src/observability/log-destination.test.ts',
  'test/contracts/admin-cli*.test.ts',
  'test/shutdown/**',
  'test/process/**',
  'test/observability/promtool.test.ts',
  'test/docs/**',
  'test/console/**',
  'test/deploy/**',
];

/**
 * MUTATION_TESTS (comma-separated globs) narrows the set's tests for a quick run of one folder. Not
 * Stryker's --testFiles: with it, Stryker 10.1 activates a static mutant (a module-level value) only after
 * the module was loaded, and reports it survived whatever the tests say (stryker-js issue 6144).
 */
const narrowed = process.env['MUTATION_TESTS']?.split(',').filter((glob) => glob !== '');
const set = chosenSet();
const include = narrowed !== undefined && narrowed.length > 0 ? narrowed : (set?.tests ?? SETS.core.tests);
const realBackends = set?.realBackends === true;

export default defineConfig({
  test: {
    include: [...include],
    exclude: [
      ...configDefaults.exclude,
      ...(realBackends ? [] : ['**/*.real.test.ts']),
      'test/cluster/**',
      'test/operations/**',
      'test/faults/**',
      'test/durability/**',
      'test/edge/**',
      ...SPAWNING,
    ],
    ...(realBackends ? { globalSetup: ['./test/support/require-real-backends.ts'] } : { setupFiles: ['./test/support/hermetic-setup.ts'] }),
    pool: 'forks',
    // A mutant that makes a call hang is failed by the test's own timeout (a kill), not waited out to
    // Stryker's limit (10 s + 3 × the covering tests' time, ~110 s for a gRPC mutant covered by every gRPC
    // test: one in six of them hung). The fast project's values (no in-process test waits a second), and
    // the real project's where the set asks for the real backends (vitest.config.ts).
    testTimeout: realBackends ? 60_000 : 20_000,
    hookTimeout: realBackends ? 120_000 : 30_000,
  },
});
