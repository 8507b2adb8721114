import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOG_BATCH } from '../../src/observability/logger.ts';
import { HANG_GUARD_MS } from './eventually.ts';
import { COMPILE_CACHE } from './spawn-bin.ts';

/**
 * The checks of rule LOG-turn-batched on a real stdout, run in child processes: the plain core's destination
 * (src/observability/log-destination.test.ts) and the speed ring's (speed/batched-stdout-process.test.ts)
 * both pass them. `make` is an expression (awaited in an ES module) that builds the destination; '' means
 * logger.ts's own.
 */
const LOGGER = JSON.stringify(new URL('../../src/observability/logger.ts', import.meta.url).href);

/** Runs `body` as an ES module in a child process that logs through the real stdout destination. */
function child(body: string, make: string): { status: number | null; stdout: string; stderr: string } {
  const script = [
    `const { createLogger: create, LOG_BATCH } = await import(${LOGGER});`,
    `const destination = ${make === '' ? 'undefined' : make};`,
    `const createLogger = (level) => create(level, destination);`,
    body,
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
    env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

export function describeLogDestination(name: string, make: string): void {
  describe(`stdout through ${name}: log lines leave in batches, in order, and none is lost at exit`, () => {
    it('[LOG-turn-batched] lines logged in one turn are held past its end, then leave, in order', () => {
      // The child counts the bytes it wrote (/proc/self/io wchar, every thread). Nothing may be written while the
      // lines are logged (no synchronous write), and fewer than one line by the end of the turn. The periodic
      // flush timer can fall inside a turn on a stalled machine (CI saw it), so each try starts right after a
      // flush was seen and the held count of the best of five tries is judged; a destination that writes at
      // the end of every turn fails all five.
      const run = child(
        [
          `const { readFileSync } = await import('node:fs');`,
          `const writes = () => Number(/wchar:\\s+(\\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);`,
          `const turn = () => new Promise((resolve) => setImmediate(resolve));`,
          `const logger = createLogger('info');`,
          `const tries = [];`,
          `for (let t = 0; t < 5; t++) {`,
          `  logger.info({ n: 0, t }, 'marker');`,
          `  const mark = writes();`,
          `  while (writes() - mark < 32) await turn();`, // the marker was written (not an 8-byte wake-up): a flush just came
          `  const before = writes();`,
          `  for (const n of [1, 2, 3]) logger.info({ n, t }, 'line');`,
          `  const during = writes() - before;`,
          `  await turn();`,
          `  tries.push({ during, held: writes() - before });`,
          `  await new Promise((resolve) => setTimeout(resolve, 3 * LOG_BATCH.flushEveryMs));`,
          `}`,
          `process.stderr.write(JSON.stringify(tries));`,
        ].join('\n'),
        make,
      );
      expect(run.status, run.stderr).toBe(0);
      const lines = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { n: number; t: number; msg: string });
      expect(lines.map((l) => `${l.t}:${l.n}`)).toEqual([0, 1, 2, 3, 4].flatMap((t) => [0, 1, 2, 3].map((n) => `${t}:${n}`)));
      const tries = JSON.parse(run.stderr) as { during: number; held: number }[];
      const lineBytes = Math.min(
        ...run.stdout
          .trim()
          .split('\n')
          .map((l) => l.length),
      );
      for (const attempt of tries) expect(attempt.during).toBeLessThan(lineBytes);
      expect(Math.min(...tries.map((attempt) => attempt.held))).toBeLessThan(lineBytes);
    });

    it('[LOG-turn-batched] once minBytes are held they are written without waiting for the flush', () => {
      const run = child(
        [
          `const { readFileSync } = await import('node:fs');`,
          `const writes = () => Number(/wchar:\\s+(\\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);`,
          `const logger = createLogger('info');`,
          `const pad = 'x'.repeat(1024);`,
          `const before = writes();`,
          `for (let n = 0; n < Math.ceil((2 * LOG_BATCH.minBytes) / 1024); n++) logger.info({ n, pad }, 'burst');`,
          // The event loop is held from here on, so no timer (no periodic flush) can run: only a write already
          // handed to the thread pool can land. Waiting for it, not for a time, makes a busy machine harmless.
          `const until = Date.now() + 10_000;`,
          `while (writes() - before < LOG_BATCH.minBytes && Date.now() < until);`,
          // Exit at once, without an exit flush: only what was already written reaches stdout.
          `process.kill(process.pid, 'SIGKILL');`,
        ].join('\n'),
        make,
      );
      const written = run.stdout.split('\n').filter((l) => l.includes('"msg":"burst"')).length;
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(Math.ceil((2 * LOG_BATCH.minBytes) / 1024));
    });

    it('[LOG-turn-batched] a process that crashes right after logging still writes the line (pino flushes at exit)', () => {
      const run = child([`createLogger('info').info({ n: 1 }, 'last words');`, `throw new Error('crash');`].join('\n'), make);
      expect(run.status).not.toBe(0);
      expect(run.stdout).toContain('"msg":"last words"');
    });

    it('[LOG-turn-batched] a process that exits on its own writes what is held (the flush timer does not keep it alive)', () => {
      const run = child(`createLogger('info').info({ n: 2 }, 'quiet exit');`, make);
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('"msg":"quiet exit"');
    });

    it('[LOG-turn-batched] SIGKILL right after a line is logged loses it: the line was held, not written', () => {
      const run = child([`createLogger('info').info({ n: 3 }, 'held');`, `process.kill(process.pid, 'SIGKILL');`].join('\n'), make);
      expect(run.stdout).not.toContain('"msg":"held"');
    });
  });
}
