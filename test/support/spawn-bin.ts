import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HANG_GUARD_MS } from './eventually.ts';
import { REPO_ROOT } from './transports.ts';

export interface SpawnedBin {
  readonly child: ChildProcess;
  /** Parsed JSON lines of stdout; a non-JSON line is kept as {msg: '<not json>', raw}. */
  readonly lines: Record<string, unknown>[];
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every non-empty line written, stdout then stderr, as text (for secret scans). */
  readonly rawLines: () => string[];
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, label: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once GET {adminUrl}/readyz answers 200 (whatever LOG_LEVEL hides); rejects if the process exits first. */
  waitReady(adminUrl: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, as an orchestrator sends it; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Teardown: SIGKILL if still running. */
  kill(): void;
}

/** How long to wait for a spawned executable before calling it hung: the suites' one guard (eventually.ts). */
export { HANG_GUARD_MS };

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Node's on-disk compile cache for the executables the suites spawn (dozens per run): the first start of a
 * file strips its types and compiles it, every later one reads both from here, about half of a start's
 * CPU. Node checks each entry against the source, so an edited file is compiled afresh; the folder goes
 * with node_modules (npm ci).
 */
export const COMPILE_CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'node-compile-cache');

/**
 * Only what the executable needs: never the test process's own environment (it may hold real DSNs).
 * `stdin`, when given, is written to the process's standard input, which is then closed.
 */
export function spawnBin(bin: string, args: readonly string[], env: Readonly<Record<string, string>>, stdin?: string): SpawnedBin {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', NODE_COMPILE_CACHE: COMPILE_CACHE, ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(stdin);
  let out = '';
  let err = '';
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) {
      if (part.trim() === '') continue;
      try {
        lines.push(JSON.parse(part) as Record<string, unknown>);
      } catch {
        lines.push({ msg: '<not json>', raw: part });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  running.add(child);
  let done = false;
  void exited.then(() => {
    done = true;
    running.delete(child);
  });
  const fail = (what: string): Error => new Error(`${bin}: ${what}; stdout: ${out.slice(-600)} stderr: ${err.slice(-300)}`);
  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    rawLines: () => [...out.split('\n'), ...err.split('\n')].filter((line) => line.trim() !== ''),
    exited,
    async waitForLine(predicate, label, timeoutMs = HANG_GUARD_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines.find(predicate);
        if (line !== undefined) return line;
        if (done || Date.now() > deadline) throw fail(`${label} not logged (${done ? 'process exited' : 'timed out'})`);
        await sleep(20);
      }
    },
    async waitReady(adminUrl, timeoutMs = HANG_GUARD_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (done) throw fail('exited before it was ready');
        // One probe's bound, not the wait's: an unanswered probe is asked again until the guard.
        const status = await fetch(`${adminUrl}/readyz`, { signal: AbortSignal.timeout(HANG_GUARD_MS / 10) }).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) return;
        if (Date.now() > deadline) throw fail(`not ready within ${timeoutMs} ms`);
        await sleep(25);
      }
    },
    async stop() {
      if (!done) child.kill('SIGTERM');
      return (await exited).code;
    },
    kill: () => {
      if (!done) child.kill('SIGKILL');
    },
  };
}

/** Waits for exit, failing after timeoutMs, a hang guard (the process is killed then). */
export async function exitWithin(
  bin: SpawnedBin,
  timeoutMs: number,
  label: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = sleep(timeoutMs).then(() => undefined);
  const result = await Promise.race([bin.exited, timer]);
  if (result === undefined) {
    bin.kill();
    throw new Error(`${label}: still running after ${timeoutMs} ms`);
  }
  return result;
}
