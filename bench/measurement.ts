import type { LoadResult } from './load-result.ts';

export type ScenarioId = 'get' | 'get-h2c' | 'list' | 'post' | 'login' | 'grpc-get' | 'bare-insert' | 'list-offset-0' | 'list-offset-10000';

export const SCENARIO_TITLES: Record<ScenarioId, string> = {
  get: 'GET /orders/{id} (cache hit)',
  'get-h2c': 'GET /orders/{id} (cache hit) over h2c, h2load',
  list: 'GET /orders?limit=20 (20,000 orders)',
  post: 'POST /orders',
  login: 'POST /auth/login',
  'grpc-get': 'gRPC GetOrder (cache hit)',
  'bare-insert': 'bare INSERT, same pg Pool',
  'list-offset-0': 'GET /orders?limit=20&offset=0',
  'list-offset-10000': 'GET /orders?limit=20&offset=10000',
};

/** One row of the report: a load run against one server child, with that child's own cost. */
export interface Measurement {
  /** `baseline`, `fastify-peer`, or `<transport>/<backend>`. */
  readonly server: string;
  readonly transport: string;
  readonly backend: string;
  readonly scenario: ScenarioId;
  readonly concurrency: number;
  readonly logLevel: string;
  /**
   * A control run taken next to the measurement it is compared with (`<server> <scenario>`), so a
   * ratio is not skewed by what else this shared machine was doing minutes earlier. Absent on the
   * primary runs the tables list.
   */
  readonly pairedFor?: string;
  readonly result: LoadResult | undefined;
  /** Why there is no result (probe failed, child failed, not applicable). */
  readonly skipped: string | undefined;
  readonly serverCpuSeconds: number;
  /** Server CPU-seconds per 1,000 answered requests. */
  readonly cpuSecondsPer1k: number;
  readonly peakRssBytes: number;
  /** 1-minute load average when the run ended: noise from other work on the machine. */
  readonly loadAverage: number;
}

export interface ScaleFigures {
  readonly sessions: {
    readonly cap: number;
    readonly recent: number;
    readonly lingering: { readonly bytesPerSession: number; readonly totalBytes: number; readonly capRefused: boolean };
    readonly held: { readonly bytesPerSession: number; readonly totalBytes: number; readonly capRefused: boolean };
  } | { readonly error: string };
  readonly startup: { readonly mode: 'embedded' | 'real'; readonly runsMs: number[]; readonly error: string | undefined }[];
}

export interface BenchRun {
  readonly quick: boolean;
  readonly startedAt: string;
  readonly wallSeconds: number;
  readonly machine: { nproc: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  readonly loadAverageStart: number;
  readonly settings: { durationMs: number; warmupMs: number; maxRequests: number; loginDurationMs: number; loginMaxRequests: number; sweep: number[] };
  readonly measurements: Measurement[];
  /** Baseline GET at 32 connections measured again at the very end: drift = noise over the run. */
  readonly baselineEnd: Measurement | undefined;
  readonly skippedServers: { server: string; reason: string }[];
  readonly realBackends: { used: boolean; reason: string | undefined; fromDefaults: string[] };
  readonly scale: ScaleFigures;
  /** How the load was generated and where processes ran (absent in runs before issue 16's method). */
  readonly method?: { readonly httpGenerator: string; readonly grpcGenerator?: string; readonly pinning: string; readonly notes: readonly string[] };
  readonly commands: string[];
}
