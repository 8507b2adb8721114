/**
 * Messages between the bench orchestrator (bench/run.ts) and a server child (bench/server.ts,
 * bench/baseline-server.ts). Every request carries an id; the child answers with the same id.
 */
export type TransportName = 'stdlib' | 'koa' | 'grpc';
export type BackendName = 'fake' | 'real';
export type LogLevelName = 'debug' | 'info' | 'warn' | 'error';

/** How the orchestrator configures a server child (JSON in BENCH_SERVER_CONFIG). */
export interface ServerChildConfig {
  readonly transport: TransportName;
  readonly backend: BackendName;
  readonly logLevel: LogLevelName;
  /** Orders seeded for the list user through the repository port. */
  readonly listOrders: number;
  /** Real backend only: schema bench_<random>, dropped when the child stops. */
  readonly schema?: string;
  readonly uniqueSuffix?: string;
}

/** What a ready child hands back: where it listens and what the scenarios need. */
export interface Fixtures {
  /** GET /orders/{id}: an order already in the cache, owned by the GET user. */
  readonly getOrderId: string;
  readonly getToken: string;
  /** GET /orders: a user holding `listOrders` orders. */
  readonly listToken: string;
  /** POST /orders. */
  readonly postToken: string;
  /** POST /auth/login: a user whose hash has the production scrypt cost. */
  readonly loginBody: string;
}

export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
  readonly adminPort: number | undefined;
  readonly fixtures: Fixtures | undefined;
  /** Milliseconds spent seeding (not part of any measured run). */
  readonly seedMs: number;
  /** gRPC only: the comparison servers in the same child (bench/grpc-peers), by name. */
  readonly grpcPeers?: ReadonlyArray<{ readonly name: string; readonly port: number }>;
}

export interface FailedMessage {
  readonly type: 'failed';
  readonly error: string;
}

export interface ProcessSample {
  readonly cpuUserUs: number;
  readonly cpuSystemUs: number;
  readonly rssBytes: number;
  /** Highest RSS seen by the child's own 25 ms sampler since the last reset. */
  readonly peakRssBytes: number;
  /** process.resourceUsage().maxRSS, whole process life. */
  readonly maxRssBytes: number;
  readonly heapUsedBytes: number;
  /** CLOCK_MONOTONIC in µs: the clock of .cpuprofile timestamps, to cut a profile to a measured window. */
  readonly monotonicUs: number;
}

export interface BareInsertResult {
  readonly count: number;
  readonly errors: number;
  readonly elapsedMs: number;
  readonly latenciesMs: number[];
}

export type ParentRequest =
  | { readonly id: number; readonly type: 'sample'; readonly resetPeak: boolean }
  | { readonly id: number; readonly type: 'log-level'; readonly level: LogLevelName }
  | { readonly id: number; readonly type: 'bare-insert'; readonly concurrency: number; readonly durationMs: number; readonly maxCount: number }
  | { readonly id: number; readonly type: 'stop' };

export type ChildReply =
  | { readonly id: number; readonly type: 'sample'; readonly sample: ProcessSample }
  | { readonly id: number; readonly type: 'log-level' }
  | { readonly id: number; readonly type: 'bare-insert'; readonly result: BareInsertResult }
  | { readonly id: number; readonly type: 'stop' }
  | { readonly id: number; readonly type: 'error'; readonly error: string };

export type ChildMessage = ReadyMessage | FailedMessage | ChildReply;
