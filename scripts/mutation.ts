#!/usr/bin/env node
// npm run mutation [-- <set>...] [-- --minutes N] [-- stryker options]: one Stryker run per mutation set
// (mutation-sets.ts), in turn, each with its own report and incremental file under reports/mutation/<set>/,
// so stopping between sets loses nothing; then the merged per-folder table (scripts/mutation-scores.ts).
// With no set named, every set runs: the night-long job. Other arguments go to each Stryker run, e.g.
// `npm run mutation -- core --concurrency 2`.
//
// `--minutes N` bounds the whole command: when the budget runs out, the set being run gets SIGINT, on
// which Stryker writes the mutants tested so far to the set's incremental file before it exits, and the
// sets after it are left for later. The next run of that set resumes from there, so a set too long for one
// sitting (or one night) is finished in several.
//
// Before each set, its survivors are taken out of its incremental file, so the run tests them again
// (see forgetSurvivors).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETS } from '../mutation-sets.ts';

const args = process.argv.slice(2);
const at = args.indexOf('--minutes');
const minutes = at === -1 ? undefined : Number(args[at + 1]);
if (minutes !== undefined && !(minutes > 0)) throw new Error(`--minutes needs a positive number, not ${String(args[at + 1])}`);
const rest = at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
const named = rest.filter((arg) => Object.hasOwn(SETS, arg));
const passed = rest.filter((arg) => !Object.hasOwn(SETS, arg));
// The package's `bin` entry: its exports map does not export the file, so it is found beside the package root.
const stryker = fileURLToPath(new URL('../node_modules/@stryker-mutator/core/bin/stryker.js', import.meta.url));
const deadline = performance.now() + (minutes ?? Infinity) * 60_000;

interface IncrementalMutant {
  readonly status: string;
}

/**
 * Every survivor (and mutant "not covered") is forgotten before a run, so each run tests it again against
 * the code and tests of the day; they are few, so this costs little. Stryker's incremental mode would reuse
 * their results where it should not:
 * - a static mutant has no recorded covering tests (it runs every test of the set), so its result was kept
 *   after tests were added that kill it: transports-http kept static survivors (the docs page's
 *   Cache-Control and CSP values) that the tests added since fail, and a module no test imported at the
 *   first run (the CLIs' usage texts) stayed "not covered" after tests began to import it;
 * - a mutant whose own text is unchanged keeps its result when other lines of its file change: the Redis
 *   decoder's `typeof value !== 'object'` stayed a survivor after its `catch` stopped returning, which made
 *   that check the only guard of an undefined value (its test fails with the mutant planted by hand).
 * Killed mutants are kept: Stryker re-tests one whose code or killing test changed.
 */
function forgetSurvivors(set: keyof typeof SETS): number {
  const file = `reports/mutation/${set}/stryker-incremental.json`;
  if (!existsSync(file)) return 0;
  const report = JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, { mutants: IncrementalMutant[] }> };
  let forgotten = 0;
  for (const [path, entry] of Object.entries(report.files)) {
    // Stryker keeps the results of a file the set no longer mutates (moved to another set): drop them, or
    // the file would be scored in two sets' reports.
    if (!inSet(set, path)) {
      forgotten += entry.mutants.length;
      delete report.files[path];
      continue;
    }
    const kept = entry.mutants.filter((mutant) => mutant.status !== 'Survived' && mutant.status !== 'NoCoverage');
    forgotten += entry.mutants.length - kept.length;
    entry.mutants = kept;
  }
  if (forgotten > 0) writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return forgotten;
}

/** Whether the set's mutate globs (mutation-sets.ts; `!` ones exclude) take the file. */
function inSet(set: keyof typeof SETS, path: string): boolean {
  const globs: readonly string[] = SETS[set].mutate;
  return (
    globs.some((glob) => !glob.startsWith('!') && matchesGlob(path, glob)) &&
    !globs.some((glob) => glob.startsWith('!') && matchesGlob(path, glob.slice(1)))
  );
}

for (const set of (named.length > 0 ? named : Object.keys(SETS)) as (keyof typeof SETS)[]) {
  const started = performance.now();
  process.stdout.write(`mutation: set ${set}\n`);
  const forgotten = forgetSurvivors(set);
  if (forgotten > 0)
    process.stdout.write(
      `mutation: ${String(forgotten)} results of ${set} forgotten (survivors and uncovered, tested again; files it no longer mutates)\n`,
    );
  const run = spawn(process.execPath, [stryker, 'run', ...passed], { stdio: 'inherit', env: { ...process.env, MUTATION_SET: set } });
  let stopped = false;
  const budget = Number.isFinite(deadline)
    ? setTimeout(
        () => {
          stopped = true;
          run.kill('SIGINT');
        },
        Math.max(0, deadline - performance.now()),
      )
    : undefined;
  const [code, signal] = (await once(run, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(budget);
  process.stdout.write(`mutation: set ${set} took ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
  if (stopped) {
    process.stdout.write(
      `mutation: the ${String(minutes)}-minute budget ran out: set ${set} stopped, its tested mutants kept in its incremental file; run it again to resume\n`,
    );
    break;
  }
  if (code !== 0) {
    process.stderr.write(`mutation: set ${set} failed (exit ${String(code ?? signal)})\n`);
    process.exit(1);
  }
}
const scores = spawn(process.execPath, [new URL('mutation-scores.ts', import.meta.url).pathname], { stdio: 'inherit' });
const [code] = (await once(scores, 'exit')) as [number | null];
process.exit(code ?? 1);
