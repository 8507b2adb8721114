import { runGrpcLoad } from './grpc-load.ts';
import { runH2load } from './h2load-load.ts';
import { percentiles } from './percentiles.ts';
import { probe, runHttpLoad, type HttpScenario } from './http-load.ts';
import type { LoadBounds, LoadResult } from './load-result.ts';
import { loadAverage } from './machine.ts';
import type { Measurement, ScenarioId } from './measurement.ts';
import type { ServerChild } from './server-child.ts';

/** Which server a measurement belongs to. */
export interface ServerLabel {
  readonly server: string;
  readonly transport: string;
  readonly backend: string;
  readonly logLevel: string;
  /** Set on control runs taken right next to another measurement for a ratio (see Measurement). */
  readonly pairedFor?: string;
}

export interface RunPlan {
  readonly scenario: ScenarioId;
  readonly bounds: LoadBounds;
  /** Warm-up at the same concurrency, numbers dropped; 0 = none. */
  readonly warmupMs: number;
  readonly warmupMaxRequests: number;
}

export function skippedMeasurement(label: ServerLabel, plan: Pick<RunPlan, 'scenario' | 'bounds'>, reason: string): Measurement {
  return {
    ...label,
    scenario: plan.scenario,
    concurrency: plan.bounds.concurrency,
    result: undefined,
    skipped: reason,
    serverCpuSeconds: Number.NaN,
    cpuSecondsPer1k: Number.NaN,
    peakRssBytes: Number.NaN,
    loadAverage: loadAverage(),
  };
}

/**
 * Warm up, then one measured run framed by two samples of the server child: CPU is the child's own
 * (process.cpuUsage inside it), divided by every request it answered; peak RSS is the child's
 * highest sampled RSS during the measured run.
 */
async function measured(child: ServerChild, label: ServerLabel, plan: RunPlan, load: (bounds: LoadBounds) => Promise<LoadResult>): Promise<Measurement> {
  if (plan.warmupMs > 0) {
    await load({ concurrency: plan.bounds.concurrency, durationMs: plan.warmupMs, maxRequests: plan.warmupMaxRequests });
  }
  const before = await child.sample(true);
  const result = await load(plan.bounds);
  const after = await child.sample(false);
  const serverCpuSeconds = (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / 1e6;
  return {
    ...label,
    scenario: plan.scenario,
    concurrency: plan.bounds.concurrency,
    result,
    skipped: result.ok === 0 ? `no successful request (${result.firstFailure ?? 'none answered'})` : undefined,
    serverCpuSeconds,
    cpuSecondsPer1k: result.served > 0 ? (serverCpuSeconds / result.served) * 1000 : Number.NaN,
    peakRssBytes: after.peakRssBytes,
    loadAverage: loadAverage(),
  };
}

export async function measureHttp(child: ServerChild, label: ServerLabel, plan: RunPlan, scenario: HttpScenario): Promise<Measurement> {
  const failure = await probe(scenario);
  if (failure !== undefined) return skippedMeasurement(label, plan, `probe failed: ${failure}`);
  return measured(child, label, plan, (bounds) => runHttpLoad(scenario, bounds));
}

/** The same request over cleartext HTTP/2 with h2load (the one-port server's REST side, spec 4.4 rule 2). */
export async function measureH2c(child: ServerChild, label: ServerLabel, plan: RunPlan, scenario: HttpScenario, cpu: string | undefined): Promise<Measurement> {
  try {
    return await measured(child, label, plan, (bounds) => runH2load(scenario, bounds, cpu));
  } catch (error) {
    return skippedMeasurement(label, plan, `h2load failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `port`: a comparison peer in the same child (bench/grpc-peers) instead of the service's own listener. */
export async function measureGrpcGet(child: ServerChild, label: ServerLabel, plan: RunPlan, token: string, orderId: string, port = child.ready.port): Promise<Measurement> {
  try {
    return await measured(child, label, plan, (bounds) => runGrpcLoad(port, token, orderId, bounds));
  } catch (error) {
    return skippedMeasurement(label, plan, `gRPC failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The bare INSERT loop runs inside the child, on the service's own pool; its numbers come back over IPC. */
export async function measureBareInsert(child: ServerChild, label: ServerLabel, plan: RunPlan): Promise<Measurement> {
  return measured(child, label, plan, async (bounds) => {
    const cpuBefore = process.cpuUsage();
    const raw = await child.bareInsert(bounds.concurrency, bounds.durationMs, bounds.maxRequests);
    const cpu = process.cpuUsage(cpuBefore);
    const [p50, p99] = percentiles(raw.latenciesMs, [50, 99]);
    return {
      ok: raw.count,
      served: raw.count + raw.errors,
      failed: raw.errors,
      elapsedSeconds: raw.elapsedMs / 1000,
      requestsPerSecond: raw.count / (raw.elapsedMs / 1000),
      p50Ms: p50 as number,
      p99Ms: p99 as number,
      firstFailure: raw.errors > 0 ? `${raw.errors} INSERTs failed` : undefined,
      clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  });
}
