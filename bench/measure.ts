import type { Fixtures, ServerChild } from './child.ts';
import { fromLatencies, probe, runGrpcLoad, runH2load, runHttpLoad, type HttpScenario, type LoadBounds, type LoadResult } from './load.ts';
import { loadAverage, type MachineInfo } from './machine.ts';
import type { SessionHeap } from './session-heap.ts';

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

/** Which server a measurement belongs to. */
export interface ServerLabel {
  /** `baseline`, `fastify-peer`, `<transport>/<backend>` or `<transport>/<backend> peer:<name>`. */
  readonly server: string;
  readonly logLevel: string;
  /**
   * Set on a control run taken next to the measurement it is compared with (`<server> <scenario>`), so
   * a ratio is not skewed by what else this shared machine was doing minutes earlier. Absent on the
   * primary runs the tables list.
   */
  readonly pairedFor?: string;
}

/** One row of the report: a load run against one server child, with that child's own cost. */
export interface Measurement extends ServerLabel {
  readonly scenario: ScenarioId;
  readonly concurrency: number;
  readonly result: LoadResult | undefined;
  /** Why there is no result (probe failed, generator failed, nothing succeeded). */
  readonly skipped: string | undefined;
  /** Server CPU-seconds per 1,000 answered requests. */
  readonly cpuSecondsPer1k: number;
  readonly peakRssBytes: number;
  /** 1-minute load average when the run ended: noise from other work on the machine. */
  readonly loadAverage: number;
}

export interface ScaleFigures {
  readonly sessions: SessionHeap | { readonly error: string };
  readonly startup: { readonly mode: 'embedded' | 'real'; readonly runsMs: number[]; readonly error: string | undefined }[];
}

export interface BenchRun {
  readonly startedAt: string;
  readonly wallSeconds: number;
  readonly machine: MachineInfo;
  readonly loadAverageStart: number;
  readonly settings: {
    readonly quick: boolean;
    readonly durationMs: number;
    readonly warmupMs: number;
    readonly loginDurationMs: number;
    readonly sweep: readonly number[];
  };
  readonly measurements: Measurement[];
  /** Baseline GET at 32 connections measured again at the very end: drift = noise over the run. */
  readonly baselineEnd: Measurement | undefined;
  readonly skippedServers: { server: string; reason: string }[];
  readonly realBackends: { used: boolean; reason: string | undefined; fromDefaults: string[] };
  readonly scale: ScaleFigures;
  /** Where processes ran. */
  readonly pinning: string;
  readonly commands: string[];
}

/** The HTTP request of a scenario against a child's fixtures (the baseline answers any path). */
export function scenarioRequest(port: number, f: Fixtures | undefined, scenario: ScenarioId): HttpScenario {
  const base = `http://127.0.0.1:${port}`;
  const bearer = (token: string | undefined): Record<string, string> => (token === undefined ? {} : { authorization: `Bearer ${token}` });
  const json = { 'content-type': 'application/json' };
  const get = (path: string, token: string | undefined): HttpScenario => ({ method: 'GET', url: `${base}${path}`, headers: bearer(token) });
  if (scenario === 'get' || scenario === 'get-h2c') return get(`/orders/${f?.getOrderId ?? 'x'}`, f?.getToken);
  if (scenario === 'list') return get('/orders?limit=20', f?.listToken);
  if (scenario.startsWith('list-offset-')) return get(`/orders?limit=20&offset=${scenario.slice('list-offset-'.length)}`, f?.listToken);
  if (scenario === 'post')
    return {
      method: 'POST',
      url: `${base}/orders`,
      headers: { ...bearer(f?.postToken), ...json },
      body: '{"item":"bench item","quantity":1}',
    };
  if (scenario === 'login') return { method: 'POST', url: `${base}/auth/login`, headers: json, body: f?.loginBody ?? '' };
  throw new Error(`${scenario} is not an HTTP scenario`);
}

export interface RunPlan extends LoadBounds {
  readonly scenario: ScenarioId;
  /** Warm-up at the same concurrency, numbers dropped; 0 = none. */
  readonly warmupMs: number;
}

/**
 * The load of `scenario` against a child (`port`: a gRPC peer in it): wrk for HTTP/1.1 after one probe
 * request, h2load for h2c and gRPC, the bare INSERT loop inside the child.
 */
export function scenarioLoad(
  child: ServerChild,
  scenario: ScenarioId,
  port = child.ready.port,
): (bounds: LoadBounds) => Promise<LoadResult> {
  const f = child.ready.fixtures;
  if (scenario === 'grpc-get') return (bounds) => runGrpcLoad(port, f?.getToken ?? '', f?.getOrderId ?? '', bounds);
  // The bare INSERT loop runs inside the child, on the service's own pool; its numbers come back over IPC.
  if (scenario === 'bare-insert')
    return async (bounds) => {
      const cpuBefore = process.cpuUsage();
      const raw = await child.bareInsert(bounds.concurrency, bounds.durationMs);
      const cpu = process.cpuUsage(cpuBefore);
      const failure = raw.errors > 0 ? `${raw.errors} INSERTs failed` : undefined;
      return fromLatencies(
        raw.latenciesMs,
        raw.latenciesMs.length + raw.errors,
        raw.elapsedMs / 1000,
        failure,
        (cpu.user + cpu.system) / 1e6,
      );
    };
  const request = scenarioRequest(port, f, scenario);
  let probed = false;
  return async (bounds) => {
    const failure = probed ? undefined : await probe(request);
    if (failure !== undefined) throw new Error(`probe failed: ${failure}`);
    probed = true;
    return scenario === 'get-h2c' ? runH2load(request, bounds) : runHttpLoad(request, bounds);
  };
}

/**
 * Warm up, then one measured run framed by two samples of the server child: CPU is the child's own
 * (process.cpuUsage inside it), divided by every request it answered; peak RSS is the child's highest
 * sampled RSS during the run. A run that fails, or where nothing succeeded, is kept as skipped.
 */
export async function measure(child: ServerChild, label: ServerLabel, plan: RunPlan, port?: number): Promise<Measurement> {
  const row = { ...label, scenario: plan.scenario, concurrency: plan.concurrency };
  const load = scenarioLoad(child, plan.scenario, port);
  try {
    if (plan.warmupMs > 0) await load({ concurrency: plan.concurrency, durationMs: plan.warmupMs });
    const before = await child.sample(true);
    const result = await load(plan);
    const after = await child.sample(false);
    return {
      ...row,
      result,
      skipped: result.ok === 0 ? `no successful request (${result.firstFailure ?? 'none answered'})` : undefined,
      cpuSecondsPer1k: result.served > 0 ? (after.cpuUs - before.cpuUs) / 1e3 / result.served : Number.NaN,
      peakRssBytes: after.peakRssBytes,
      loadAverage: loadAverage(),
    };
  } catch (error) {
    const skipped = error instanceof Error ? error.message : String(error);
    return { ...row, result: undefined, skipped, cpuSecondsPer1k: Number.NaN, peakRssBytes: Number.NaN, loadAverage: loadAverage() };
  }
}
