import { parseArgs } from 'node:util';
import { INVARIANTS } from './invariants.ts';
import { combinedDigest, DEFAULT_SHAPE, exploreSeed } from './explorer.ts';
import { describeStep } from './workload.ts';

/**
 * npm run explore -- --seeds N [--seed S] [--steps K] [--replicas R] [--trace]
 *
 * Runs seeds S, S+1, … S+N-1 (S defaults to 1; `--seed S` alone replays that one seed) and prints one
 * summary line: seeds, steps, invariants checked, and the digest of every trace. On the first violation
 * it prints the seed, the invariant and the shrunk step list, and exits 1.
 */
const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    seed: { type: 'string' },
    steps: { type: 'string' },
    replicas: { type: 'string' },
    users: { type: 'string' },
    trace: { type: 'boolean', default: false },
  },
});

function count(name: string, text: string | undefined, fallback: number, min = 1): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    console.error(`explore: --${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const first = count('seed', values.seed, 1, 0);
const seeds = count('seeds', values.seeds, 1);
const shape = {
  steps: count('steps', values.steps, DEFAULT_SHAPE.steps),
  replicas: count('replicas', values.replicas, DEFAULT_SHAPE.replicas),
  users: count('users', values.users, DEFAULT_SHAPE.users, 2),
};

const started = performance.now();
const digests: string[] = [];
let checks = 0;
for (let seed = first; seed < first + seeds; seed++) {
  const outcome = await exploreSeed(seed, shape);
  digests.push(outcome.result.digest);
  checks += outcome.result.checks;
  if (values.trace) for (const line of outcome.result.trace) console.log(`seed ${seed} | ${line}`);
  if (outcome.shrunk !== undefined) {
    console.error(`explore: VIOLATION seed ${seed}: ${outcome.result.violation?.message}`);
    console.error(
      `explore: invariant ${outcome.shrunk.invariant}; shrunk to ${outcome.shrunk.steps.length} step(s) in ${outcome.shrunk.replays} replays (${outcome.shrunk.message}):`,
    );
    outcome.shrunk.steps.forEach((step, i) => console.error(`  ${i} ${describeStep(step)}`));
    console.error(
      `explore: replay with: npm run explore -- --seed ${seed} --seeds 1 --steps ${shape.steps} --replicas ${shape.replicas} --trace`,
    );
    process.exit(1);
  }
}
const seconds = ((performance.now() - started) / 1_000).toFixed(1);
console.log(
  `explore: ${seeds} seed(s) ${first}..${first + seeds - 1} x ${shape.steps} steps, ${shape.replicas} replicas, ` +
    `${Object.keys(INVARIANTS).length} invariants, ${checks} checks passed, digest ${combinedDigest(digests)} (${seconds} s)`,
);
