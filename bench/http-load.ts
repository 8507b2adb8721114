import { createRequire } from 'node:module';
import { toLoadResult, type HttpScenario, type LoadBounds, type LoadResult } from './load-result.ts';
import { runWrk } from './wrk-load.ts';

/** The slice of autocannon 9's API used here (the package ships no types). */
interface AutocannonOptions {
  url: string;
  connections: number;
  amount?: number;
  duration?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeout?: number;
  sampleInt?: number;
}
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void;
  on(event: 'reqError', listener: (error: Error) => void): void;
  on(event: 'done', listener: (result: unknown) => void): void;
  stop(): void;
}
type Autocannon = (options: AutocannonOptions, callback: (error: Error | null, result: unknown) => void) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export type { HttpScenario } from './load-result.ts';

const SOCKET_TIMEOUT_S = 10;

/** Which generator HTTP/1.1 runs use: wrk (pinned to `cpu` when set) once bench/run.ts found it, else autocannon. */
let generator: { readonly tool: 'wrk' | 'autocannon'; readonly cpu?: string | undefined } = { tool: 'autocannon' };

export function useHttpGenerator(tool: 'wrk' | 'autocannon', cpu?: string): void {
  generator = { tool, cpu };
}

export function httpGeneratorName(): string {
  return generator.tool === 'wrk' ? `wrk${generator.cpu === undefined ? '' : ` (pinned to CPU ${generator.cpu})`}` : 'autocannon 9 (in the orchestrator)';
}

/**
 * One autocannon run, bounded by time (stop()) and by count (amount). Latency is taken from every
 * response's own float timing rather than autocannon's 1 ms histogram, so sub-millisecond p50s stay
 * visible. Warm-up is a separate, shorter run whose numbers are dropped.
 */
export async function runHttpLoad(scenario: HttpScenario, bounds: LoadBounds): Promise<LoadResult> {
  if (generator.tool === 'wrk') return runWrk(scenario, bounds, generator.cpu);
  return runAutocannon(scenario, bounds);
}

async function runAutocannon(scenario: HttpScenario, bounds: LoadBounds): Promise<LoadResult> {
  const latencies: number[] = [];
  let served = 0;
  let windowEnd: number | undefined;
  let lastResponse = 0;
  let failed = 0;
  let firstFailure: string | undefined;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: scenario.url,
        method: scenario.method,
        headers: scenario.headers,
        body: scenario.body,
        connections: bounds.concurrency,
        amount: Math.max(bounds.maxRequests, bounds.concurrency),
        timeout: SOCKET_TIMEOUT_S,
        // autocannon notices stop() on its sample tick: 100 ms instead of 1 s shortens the tail.
        sampleInt: 100,
      },
      (error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      },
    );
    const timer = setTimeout(() => {
      windowEnd = performance.now();
      instance.stop();
    }, bounds.durationMs);
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      served += 1;
      if (windowEnd !== undefined) return; // answered after the window closed: counted for CPU only
      lastResponse = performance.now();
      if (statusCode >= 200 && statusCode < 300) {
        latencies.push(ms);
      } else {
        failed += 1;
        firstFailure ??= `HTTP ${statusCode}`;
      }
    });
    instance.on('reqError', (error) => {
      if (windowEnd !== undefined) return; // sockets torn down by stop()
      failed += 1;
      firstFailure ??= error.message;
    });
  });
  const elapsedSeconds = ((windowEnd ?? lastResponse) - started) / 1000;
  return toLoadResult({ latencies, served, failed, firstFailure, elapsedSeconds, cpuBefore });
}

/** One plain request before a run: a scenario that does not answer 2xx is reported, not measured. */
export async function probe(scenario: HttpScenario): Promise<string | undefined> {
  try {
    const response = await fetch(scenario.url, {
      method: scenario.method,
      headers: scenario.headers,
      body: scenario.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    return response.ok ? undefined : `HTTP ${response.status}: ${text.slice(0, 120)}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
