import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The real executable `node bin/orders-stdlib.ts`, run as its own process with an explicit environment. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Every line it wrote, stdout and stderr. */
  readonly lines: string[];
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** Resolves once GET {adminUrl}/readyz answers 200; rejects if the process exits first. */
  waitReady(adminUrl: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, as an orchestrator would; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Teardown: SIGKILL if still running. */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Only the given variables (plus PATH and HOME): nothing from the test runner leaks into the service. */
export function spawnOrdersBin(env: Readonly<Record<string, string>>, args: readonly string[] = []): ServiceProcess {
  const child = spawn(process.execPath, ['bin/orders-stdlib.ts', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts.filter((line) => line.trim() !== ''));
    });
    stream?.on('end', () => {
      if (pending.trim() !== '') lines.push(pending);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  let done = false;
  void exited.then(() => (done = true));

  return {
    child,
    lines,
    exited,
    async waitReady(adminUrl, timeoutMs = 10_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        if (done) throw new Error(`orders-stdlib exited before it was ready:\n${lines.join('\n')}`);
        const status = await fetch(`${adminUrl}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) return;
        if (performance.now() > deadline) throw new Error(`orders-stdlib not ready within ${timeoutMs} ms:\n${lines.join('\n')}`);
        await sleep(25);
      }
    },
    async stop() {
      if (!done) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (!done) child.kill('SIGKILL');
      await exited;
    },
  };
}
