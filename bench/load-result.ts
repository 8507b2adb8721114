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

export interface LoadBounds {
  readonly concurrency: number;
  readonly durationMs: number;
  /** Hard cap on requests, whichever bound is hit first ends the run. */
  readonly maxRequests: number;
}
