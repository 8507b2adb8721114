// Mutation testing (docs/mutation-testing.md): Stryker plants small bugs in src/ one at a time and runs
// the tests that reach each one. A run mutates one set of folders (MUTATION_SET, mutation-sets.ts) and
// writes that set's report and incremental file under reports/mutation/<set>/; the incremental file is
// committed, so a later run re-tests only mutants whose code or covering tests changed.
// `npm run mutation` (scripts/mutation.ts) runs every set in turn, `npm run mutation -- core` one;
// `npm run mutation:ci` (run by .ci/run) the core set.
import { chosenSet } from './mutation-sets.ts';

const set = chosenSet();
if (set === undefined) throw new Error('MUTATION_SET names no set: run `npm run mutation` (every set) or `npm run mutation -- <set>`');
const dir = `reports/mutation/${set.name}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // The in-process tests only: a spawned executable never sees the active mutant (vitest.mutation.config.ts).
  vitest: { configFile: 'vitest.mutation.config.ts', pool: 'forks' },
  mutate: [
    ...set.mutate,
    '!**/*.test.ts',
    // Generated from proto/ and openapi/ (npm run generate): mutating it tests the generator, not us.
    '!src/gen/**',
  ],
  // Only the tests that reach a mutant run for it.
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: `${dir}/stryker-incremental.json`,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: `${dir}/mutation.html` },
  jsonReporter: { fileName: `${dir}/mutation.json` },
  // The machine is shared (and CI has two cores): one test runner at a time; `-- --concurrency 2` for a
  // machine of one's own.
  concurrency: 1,
  // A mutant that turns a loop endless or a wait unbounded is a timeout (counted as detected), not a hang:
  // after 1.5 × the covering tests' own time plus this. No in-process test waits a second on the wall clock
  // (the Clock port, short configured timeouts), so 10 s over their time is slack for a busy machine; the
  // first runs used 20 s, and in the gRPC folder one mutant in six then cost 20 s of nothing.
  timeoutMS: 10_000,
  // The factor scales with the covering tests' time, which is what a loaded machine stretches. A static
  // mutant runs the whole set (about 45 s of tests for the transport sets): at Stryker's default 1.5 its
  // limit was 76 s, and with the machine at load 5 on two cores 14 of 46 static mutants in a row were
  // reported timed out (counted as detected) only because the run was slow. At 3 a short test's limit
  // barely moves (0.5 s of tests: 11.5 s), and only a real hang in a static mutant costs more.
  timeoutFactor: 3,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['reports/**', 'docs/**', 'bench/**', 'deploy/**', 'docker/**', '.stryker-tmp/**'],
  cleanTempDir: 'always',
};
