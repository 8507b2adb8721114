import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BROKEN_VARIANTS, CLASS_VARIANTS } from './broken-variants.ts';
import { renderReport, summarise } from './coverage.ts';
import { INVARIANTS } from './invariants.ts';
import { combinedDigest, DEFAULT_SHAPE, exploreSeed } from './explorer.ts';
import { describeStep } from './workload.ts';

/**
 * npm run explore -- --seeds N [--seed S] [--steps K] [--replicas R] [--trace] [--coverage] [--variant NAME]
 *
 * Runs seeds S, S+1, … S+N-1 (S defaults to 1; `--seed S` alone replays that one seed) and prints one
 * summary line: seeds, steps, invariants checked, and the digest of every trace. On a terminal it
 * rewrites one progress line as it goes (seeds done, checks, elapsed). On the first violation it prints
 * the seed, the invariant and the shrunk step list, and exits 1. `--coverage` runs the same exploration
 * in a child process under NODE_V8_COVERAGE and writes reports/explore-coverage.md (explore/coverage.ts).
 * `--variant NAME` runs a deliberately broken service instead (explore/broken-variants.ts, a part of its
 * name): the first violating seed is how many seeds it took to find it.
 */
const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    seed: { type: 'string' },
    steps: { type: 'string' },
    replicas: { type: 'string' },
    users: { type: 'string' },
    trace: { type: 'boolean', default: false },
    coverage: { type: 'boolean', default: false },
    variant: { type: 'string' },
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
const variants = [...BROKEN_VARIANTS, ...CLASS_VARIANTS].filter((v) => values.variant !== undefined && v.name.includes(values.variant));
if (values.variant !== undefined && variants.length !== 1) {
  console.error(
    `explore: --variant must name one of: ${[...BROKEN_VARIANTS, ...CLASS_VARIANTS].map((v) => JSON.stringify(v.name)).join(', ')}`,
  );
  process.exit(2);
}
const shape = {
  variant: variants[0],
  steps: count('steps', values.steps, DEFAULT_SHAPE.steps),
  replicas: count('replicas', values.replicas, DEFAULT_SHAPE.replicas),
  users: count('users', values.users, DEFAULT_SHAPE.users, 2),
};

if (values.coverage) {
  const dir = mkdtempSync(join(tmpdir(), 'explore-coverage-'));
  try {
    const args = process.argv.slice(2).filter((arg) => arg !== '--coverage');
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...args], {
      stdio: 'inherit',
      env: { ...process.env, NODE_V8_COVERAGE: dir },
    });
    const how = `npm run explore -- ${args.join(' ')} --coverage`.replace(/\s+/g, ' ');
    const summary = summarise(dir);
    const report = renderReport(summary, how);
    writeFileSync(fileURLToPath(new URL('../reports/explore-coverage.md', import.meta.url)), report);
    const pct = (a: number, b: number): string => ((100 * a) / b).toFixed(1);
    console.log(
      `explore: coverage of src/service, src/session, src/rate-limit: lines ${pct(summary.linesCovered, summary.lines)}% ` +
        `(${summary.linesCovered}/${summary.lines}), branches ${pct(summary.branchesCovered, summary.branches)}% ` +
        `(${summary.branchesCovered}/${summary.branches}); written to reports/explore-coverage.md`,
    );
    process.exitCode = child.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  await explore();
}

async function explore(): Promise<void> {
  const started = performance.now();
  const elapsed = (): string => ((performance.now() - started) / 1_000).toFixed(1);
  // A progress line only for a person watching: rewritten in place on a terminal, never in a log.
  const live = process.stdout.isTTY === true && !values.trace;
  let shown = 0;
  const digests: string[] = [];
  let checks = 0;
  let current = first;
  let finished = false;
  // A run whose simulation waits on nothing left to run ends the process without a word: name the seed.
  process.on('exit', () => {
    if (!finished)
      console.error(
        `explore: the simulation stalled at seed ${current} (nothing left to run); replay it with --seed ${current} --seeds 1 --trace`,
      );
  });
  for (let seed = first; seed < first + seeds; seed++) {
    current = seed;
    const outcome = await exploreSeed(seed, shape);
    digests.push(outcome.result.digest);
    checks += outcome.result.checks;
    if (values.trace) for (const line of outcome.result.trace) console.log(`seed ${seed} | ${line}`);
    if (live && (performance.now() - shown > 200 || seed === first + seeds - 1)) {
      shown = performance.now();
      process.stdout.write(`\rexplore: ${seed - first + 1}/${seeds} seeds, ${checks} checks, ${elapsed()} s\u001b[K`);
    }
    if (outcome.shrunk !== undefined) {
      if (live) process.stdout.write('\n');
      console.error(`explore: VIOLATION seed ${seed} (${seed - first + 1} seed(s) run): ${outcome.result.violation?.message}`);
      console.error(
        `explore: invariant ${outcome.shrunk.invariant}; shrunk to ${outcome.shrunk.steps.length} step(s) in ${outcome.shrunk.replays} replays (${outcome.shrunk.message}):`,
      );
      outcome.shrunk.steps.forEach((step, i) => console.error(`  ${i} ${describeStep(step)}`));
      console.error(
        `explore: replay with: npm run explore -- --seed ${seed} --seeds 1 --steps ${shape.steps} --replicas ${shape.replicas} --trace` +
          (values.variant === undefined ? '' : ` --variant ${JSON.stringify(values.variant)}`),
      );
      finished = true;
      process.exit(1);
    }
  }
  finished = true;
  if (live) process.stdout.write('\r\u001b[K');
  console.log(
    `explore: ${seeds} seed(s) ${first}..${first + seeds - 1} x ${shape.steps} steps, ${shape.replicas} replicas, ` +
      `${Object.keys(INVARIANTS).length} invariants, ${checks} checks passed, digest ${combinedDigest(digests)} (${elapsed()} s)`,
  );
}
