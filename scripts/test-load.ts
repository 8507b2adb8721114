/**
 * npm run test:load [-- --rounds N]: the hermetic suite with both cores busy (docs/testing.md). Each round runs
 * `npm test` here and, at the same time, in a clone of this commit (node_modules linked), beside two
 * `yes >/dev/null` loops; both runs must pass. Prints each run's tests line, wall time, CPU (user + system of
 * the whole process tree, from getrusage of the children) and the load average before and after. Exit 1 when
 * any run of any round failed. `.ci/run` runs one round; the suite's report (reports/test-suite.md) ten.
 *
 * Nothing in npm test waits on the clock, so a loaded machine may make it slower, never red.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '1' } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error(`--rounds: expected 1..50, got ${values.rounds}`);

const here = process.cwd();
const tmp = mkdtempSync(join(tmpdir(), 'orders-load-'));
const clone = join(tmp, 'orders');
execFileSync('git', ['clone', '-q', here, clone]);
symlinkSync(join(here, 'node_modules'), join(clone, 'node_modules'));

interface Run {
  readonly ok: boolean;
  readonly line: string;
  readonly wallS: number;
  readonly cpuS: number;
}

/** One `npm test` under /usr/bin/time (CPU of the whole tree it waited for), its output kept in `log`. */
function npmTest(cwd: string, log: string): Promise<Run> {
  const timing = join(tmp, `${log}.time`);
  const env = { ...process.env };
  for (const name of ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL']) delete env[name];
  const child = spawn('/usr/bin/time', ['-o', timing, '-f', '%e %U %S', 'npm', 'test'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const output = Buffer.concat(chunks).toString('utf8');
      writeFileSync(join(tmp, log), output);
      const last = readFileSync(timing, 'utf8').trim().split('\n').pop() ?? '';
      const [wall = NaN, user = NaN, sys = NaN] = last.split(' ').map(Number);
      const line =
        /^tests: .*$/m.exec(output)?.[0] ?? `no summary (exit ${code}); last lines:\n${output.split('\n').slice(-40).join('\n')}`;
      resolve({ ok: code === 0, line, wallS: wall, cpuS: user + sys });
    }),
  );
}

const load = (): string => loadavg()[0]!.toFixed(1);
const busy: ChildProcess[] = [];
let failed = 0;
try {
  for (let round = 1; round <= rounds; round += 1) {
    const before = load();
    for (let i = 0; i < 2; i += 1) busy.push(spawn('yes', [], { stdio: ['ignore', 'ignore', 'ignore'] }));
    const [main, second] = await Promise.all([npmTest(here, `round-${round}-here.log`), npmTest(clone, `round-${round}-clone.log`)]);
    for (const p of busy.splice(0)) p.kill();
    for (const [name, run] of [
      ['here', main],
      ['clone', second],
    ] as const) {
      if (!run.ok) failed += 1;
      console.log(
        `test:load: round ${round} ${name}: ${run.ok ? 'green' : 'RED'}, ${run.line.split('\n')[0]}, ${run.wallS.toFixed(1)} s wall, ${run.cpuS.toFixed(1)} s CPU (load ${before} before, ${load()} after)`,
      );
      if (!run.ok) console.log(run.line);
    }
  }
} finally {
  for (const p of busy) p.kill();
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`test:load: ${rounds} round(s), ${2 * rounds - failed} of ${2 * rounds} runs green`);
process.exitCode = failed === 0 ? 0 : 1;
