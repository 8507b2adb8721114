import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoPath } from '../targets/transports.ts';

export interface SpawnedBin {
  readonly child: ChildProcess;
  /** Parsed JSON lines of stdout; a non-JSON line is kept as {msg: '<not json>', raw}. */
  readonly lines: Record<string, unknown>[];
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, label: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): void;
}

/** Only what the executable needs: never the test process's own environment (it may hold real DSNs). */
export function spawnBin(bin: string, args: readonly string[], env: Readonly<Record<string, string>>): SpawnedBin {
  const child = spawn(process.execPath, [repoPath(bin), ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitForLine(predicate, label, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = lines.find(predicate);
        if (line !== undefined) return line;
        if (done || Date.now() > deadline) throw new Error(`${bin}: ${label} not logged (${done ? 'process exited' : 'timed out'}); stdout: ${out.slice(-600)} stderr: ${err.slice(-300)}`);
        await sleep(20);
      }
    },
    kill: () => {
      if (!done) child.kill('SIGKILL');
    },
  };
}

/** Waits for exit, failing after timeoutMs (the process is killed then). */
export async function exitWithin(bin: SpawnedBin, timeoutMs: number, label: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = sleep(timeoutMs).then(() => undefined);
  const result = await Promise.race([bin.exited, timer]);
  if (result === undefined) {
    bin.kill();
    throw new Error(`${label}: still running after ${timeoutMs} ms`);
  }
  return result;
}
