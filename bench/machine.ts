import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
}

export function machineInfo(): MachineInfo {
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
