import { percentiles } from './percentiles.ts';

/** One measured load run, whatever generated it (autocannon, the gRPC loop, the bare INSERT loop). */
export interface LoadResult {
  /** Successful responses (2xx, or gRPC OK) inside the measured window. */
  readonly ok: number;
  /** Every answer the server produced, including after the window closed: the divisor for server CPU. */
  readonly served: number;
  /** Non-2xx responses, gRPC errors and socket errors. */
  readonly failed: number;
  readonly elapsedSeconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** First failure seen (status and a body excerpt, or the error), for the report. */
  readonly firstFailure: string | undefined;
  /** Load generator CPU over the run (this process), to show when the client, not the server, was the limit. */
  readonly clientCpuSeconds: number;
}

/** One HTTP request shape a load generator repeats (autocannon or wrk). */
export interface HttpScenario {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface LoadBounds {
  readonly concurrency: number;
  readonly durationMs: number;
  /** Hard cap on requests, whichever bound is hit first ends the run. */
  readonly maxRequests: number;
}

export interface LoadTally {
  readonly latencies: number[];
  readonly served: number;
  readonly failed: number;
  readonly firstFailure: string | undefined;
  readonly elapsedSeconds: number;
  /** process.cpuUsage() taken when the run started. */
  readonly cpuBefore: NodeJS.CpuUsage;
}

/** The one way every load generator turns what it counted into a LoadResult. */
export function toLoadResult(tally: LoadTally): LoadResult {
  const cpu = process.cpuUsage(tally.cpuBefore);
  const [p50, p99] = percentiles(tally.latencies, [50, 99]);
  return {
    ok: tally.latencies.length,
    served: tally.served,
    failed: tally.failed,
    elapsedSeconds: tally.elapsedSeconds,
    requestsPerSecond: tally.latencies.length / tally.elapsedSeconds,
    p50Ms: p50 as number,
    p99Ms: p99 as number,
    firstFailure: tally.firstFailure,
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}
