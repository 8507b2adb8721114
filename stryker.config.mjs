// Mutation testing (README "Mutation testing"): Stryker plants small bugs in src/ one at a time and runs
// the tests that reach each one. `npm run mutation` runs it all; `npm run mutation -- --mutate 'src/domain/**/*.ts,!src/**/*.test.ts'`
// one folder. The incremental file is committed, so a later run re-tests only mutants whose code or
// covering tests changed.
//
// MUTATION_SET=core (npm run mutation:ci, run by .ci/run) mutates src/domain, src/session and src/service only,
// against the tests vitest.mutation.config.ts names for that set: the folders with a committed baseline,
// so CI re-tests only the mutants whose code or covering tests changed. Without it: all of src/.
const CORE_SET = process.env['MUTATION_SET'] === 'core';
const CORE_FOLDERS = ['src/domain/**/*.ts', 'src/session/**/*.ts', 'src/service/**/*.ts'];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // The in-process tests only: a spawned executable never sees the active mutant (vitest.mutation.config.ts).
  vitest: { configFile: 'vitest.mutation.config.ts', pool: 'forks' },
  mutate: [
    ...(CORE_SET ? CORE_FOLDERS : ['src/**/*.ts']),
    '!src/**/*.test.ts',
    // Generated from proto/ and openapi/ (npm run generate): mutating it tests the generator, not us.
    '!src/gen/**',
  ],
  // Only the tests that reach a mutant run for it.
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // The machine is shared (and CI has two cores): one test runner at a time.
  concurrency: 1,
  // A mutant that turns a loop endless or a wait unbounded is a timeout (counted as detected), not a hang.
  timeoutMS: 20_000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['reports/**', 'docs/**', 'bench/**', 'deploy/**', 'docker/**', '.stryker-tmp/**'],
  cleanTempDir: 'always',
};
