import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOG_BATCH } from './logger.ts';

const LOGGER = JSON.stringify(new URL('./logger.ts', import.meta.url).href);

/** Runs `body` as an ES module in a child process that logs through the real stdout destination. */
function child(body: string): { status: number | null; stdout: string; stderr: string } {
  const script = [`const { createLogger, LOG_BATCH } = await import(${LOGGER});`, body].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('stdout destination: log lines leave in batches, in order, and none is lost at exit', () => {
  it('[LOG-turn-batched] lines logged in one turn are held past its end, then leave, in order', () => {
    // The child counts the bytes it wrote (/proc/self/io wchar, every thread): fewer than one line by the
    // end of the turn (libuv's own wake-ups write 8 bytes each), all three lines once the flush came.
    const run = child(
      [
        `const { readFileSync } = await import('node:fs');`,
        `const writes = () => Number(/wchar:\\s+(\\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);`,
        `const logger = createLogger('info');`,
        `const before = writes();`,
        `for (const n of [1, 2, 3]) logger.info({ n }, 'line');`,
        `await new Promise((resolve) => setImmediate(resolve));`,
        `const held = writes() - before;`,
        `await new Promise((resolve) => setTimeout(resolve, 5 * LOG_BATCH.flushEveryMs));`,
        `process.stderr.write(JSON.stringify({ held, after: writes() - before }));`,
      ].join('\n'),
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([1, 2, 3]);
    const { held, after } = JSON.parse(run.stderr) as { held: number; after: number };
    expect(held).toBeLessThan(lines[0]!.length);
    expect(after).toBeGreaterThanOrEqual(run.stdout.length);
  });

  it('[LOG-turn-batched] once minBytes are held they are written without waiting for the flush', () => {
    const run = child(
      [
        `const logger = createLogger('info');`,
        `const pad = 'x'.repeat(1024);`,
        `for (let n = 0; n < Math.ceil((2 * LOG_BATCH.minBytes) / 1024); n++) logger.info({ n, pad }, 'burst');`,
        // Exit at once, without an exit flush: only what was already written reaches stdout.
        `process.kill(process.pid, 'SIGKILL');`,
      ].join('\n'),
    );
    const written = run.stdout.split('\n').filter((l) => l.includes('"msg":"burst"')).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(Math.ceil((2 * LOG_BATCH.minBytes) / 1024));
  });

  it('[LOG-turn-batched] a process that crashes right after logging still writes the line (pino flushes at exit)', () => {
    const run = child([`createLogger('info').info({ n: 1 }, 'last words');`, `throw new Error('crash');`].join('\n'));
    expect(run.status).not.toBe(0);
    expect(run.stdout).toContain('"msg":"last words"');
  });

  it('[LOG-turn-batched] a process that exits on its own writes what is held (the flush timer does not keep it alive)', () => {
    const run = child(`createLogger('info').info({ n: 2 }, 'quiet exit');`);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('"msg":"quiet exit"');
  });

  it('[LOG-turn-batched] SIGKILL right after a line is logged loses it: the line was held, not written', () => {
    const run = child([`createLogger('info').info({ n: 3 }, 'held');`, `process.kill(process.pid, 'SIGKILL');`].join('\n'));
    expect(run.stdout).not.toContain('"msg":"held"');
  });
});
