import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

export type MachineInfo = ReturnType<typeof machineInfo>;

export function machineInfo() {
  let cpuModel = 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux: leave it unknown
  }
  return {
    nproc: availableParallelism(),
    cpuModel,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

/** 1-minute load average: other work on this shared machine shows up here. */
export function loadAverage(): number {
  return loadavg()[0] ?? 0;
}

/** Installed = it could be spawned (whatever `--version` makes it exit with). */
export function hasTool(tool: string): boolean {
  return spawnSync(tool, ['--version'], { stdio: 'ignore' }).error === undefined;
}

/**
 * The method: the server under test on one core, the load generator on another, so neither
 * steals the other's cycles (Postgres, Redis and NATS still float over both: they are shared services).
 * Needs taskset (util-linux) and two cores; otherwise nothing is pinned and the report says so.
 */
export function detectPinning(): { readonly serverCpu: string; readonly generatorCpu: string } | undefined {
  if (availableParallelism() < 2 || !hasTool('taskset')) return undefined;
  return { serverCpu: '0', generatorCpu: '1' };
}
export type Pinning = NonNullable<ReturnType<typeof detectPinning>>;

/** Every thread of `pid` (V8 and libuv threads included: -a) onto `cpus`; threads made later inherit it. */
export function pinProcess(pid: number, cpus: string): void {
  const result = spawnSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`taskset -a -cp ${cpus} ${pid} failed (${result.status})`);
}
