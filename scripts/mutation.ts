#!/usr/bin/env node
// npm run mutation [-- <set>...] [-- stryker options]: one Stryker run per mutation set
// (mutation-sets.ts), in turn, each with its own report and incremental file under reports/mutation/<set>/,
// so stopping between sets loses nothing; then the merged per-folder table (scripts/mutation-scores.ts).
// With no set named, every set runs: the night-long job. Other arguments go to each Stryker run, e.g.
// `npm run mutation -- core --concurrency 2`.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { SETS } from '../mutation-sets.ts';

const args = process.argv.slice(2);
const named = args.filter((arg) => Object.hasOwn(SETS, arg));
const passed = args.filter((arg) => !Object.hasOwn(SETS, arg));
const stryker = createRequire(import.meta.url).resolve('@stryker-mutator/core/bin/stryker.js');

for (const set of named.length > 0 ? named : Object.keys(SETS)) {
  const started = performance.now();
  process.stdout.write(`mutation: set ${set}\n`);
  const run = spawnSync(process.execPath, [stryker, 'run', ...passed], { stdio: 'inherit', env: { ...process.env, MUTATION_SET: set } });
  process.stdout.write(`mutation: set ${set} took ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
  if (run.status !== 0) {
    process.stderr.write(`mutation: set ${set} failed (exit ${String(run.status ?? run.signal)})\n`);
    process.exit(1);
  }
}
const scores = spawnSync(process.execPath, [new URL('mutation-scores.ts', import.meta.url).pathname], { stdio: 'inherit' });
process.exit(scores.status ?? 1);
