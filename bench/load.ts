// The load generators: wrk for HTTP/1.1, h2load for h2c and gRPC (efficient generators on
// their own core), and the gRPC calls that check a gRPC run will succeed before h2load, which sees
// HTTP statuses only, is trusted with it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeRequest } from '../conformance/drivers/grpc.ts';
import { grpcFrame, rawGrpc } from '../test/grpc/raw-grpc.ts';
import { percentiles } from './percentiles.ts';

/** One measured load run, whatever generated it (wrk, h2load, the bare INSERT loop). */
export interface LoadResult {
  /** Successful responses (2xx, or gRPC OK) inside the measured window. */
  readonly ok: number;
  /** Every answer the server produced: the divisor for server CPU. */
  readonly served: number;
  /** Non-2xx responses, stream errors and socket errors. */
  readonly failed: number;
  readonly elapsedSeconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** First failure seen, for the report. */
  readonly firstFailure: string | undefined;
  /** The load generator's own CPU over the run, to show when the client, not the server, was the limit. */
  readonly clientCpuSeconds: number;
}

/** One HTTP request shape a load generator repeats. */
export interface HttpScenario {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface LoadBounds {
  readonly concurrency: number;
  readonly durationMs: number;
}

/** Where the generators run (taskset CPU list), set once by the orchestrator; undefined = not pinned. */
let generatorCpu: string | undefined;

export function pinGenerators(cpu: string | undefined): void {
  generatorCpu = cpu;
}

const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * A generator under bash with `times` after it, bounded by its own -d/-D and killed if it overruns. The
 * last line of `times` holds the children's user and system time ("0m1.234s 0m0.056s").
 */
async function runTool(args: readonly string[], seconds: number): Promise<{ stdout: string; failure: string; cpuSeconds: number }> {
  const command = `${generatorCpu === undefined ? '' : `taskset -c ${generatorCpu} `}${args.map(quote).join(' ')}; times`;
  const { stdout, stderr } = await promisify(execFile)('bash', ['-c', command], {
    timeout: (seconds + 30) * 1000,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 2 ** 20,
  });
  const times = [...(stdout.trim().split('\n').at(-1) ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  const failure = `${args[0]} gave no summary: ${stderr.trim().slice(-300) || stdout.trim().slice(-300)}`;
  return { stdout, failure, cpuSeconds: times.length === 2 ? (times[0] as number) + (times[1] as number) : Number.NaN };
}

/** A LoadResult from per-request latencies (ms) of successful answers. */
export function fromLatencies(
  latencies: number[],
  served: number,
  elapsedSeconds: number,
  firstFailure: string | undefined,
  clientCpuSeconds: number,
): LoadResult {
  const [p50, p99] = percentiles(latencies, [50, 99]);
  const ok = latencies.length;
  return {
    ok,
    served,
    failed: served - ok,
    elapsedSeconds,
    requestsPerSecond: ok / elapsedSeconds,
    p50Ms: p50 as number,
    p99Ms: p99 as number,
    firstFailure,
    clientCpuSeconds,
  };
}

/**
 * wrk's summary as one JSON line from its done() hook: requests completed, the error classes, and
 * latency percentiles in µs from its own histogram (1 µs resolution).
 */
const WRK_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"durationUs":%d,"socket":%d,"status":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
`;

const lua = (value: string): string => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * One wrk run (one thread, `concurrency` keep-alive connections). Responses outside 2xx/3xx are
 * counted as failed (wrk's "status" errors).
 */
export async function runHttpLoad(scenario: HttpScenario, bounds: LoadBounds): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-wrk-'));
  try {
    const file = join(dir, 'scenario.lua');
    const lines = [
      `wrk.method = ${lua(scenario.method)}`,
      ...Object.entries(scenario.headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    ];
    if (scenario.body !== undefined) lines.push(`wrk.body = ${lua(scenario.body)}`);
    await writeFile(file, `${lines.join('\n')}\n${WRK_DONE}`);
    const seconds = Math.max(1, Math.round(bounds.durationMs / 1000));
    const { stdout, failure, cpuSeconds } = await runTool(
      ['wrk', '-t1', `-c${bounds.concurrency}`, `-d${seconds}s`, '--timeout', '10s', '-s', file, scenario.url],
      seconds,
    );
    const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
    if (line === undefined) throw new Error(failure);
    const s = JSON.parse(line.slice('WRK_JSON '.length)) as {
      requests: number;
      durationUs: number;
      socket: number;
      status: number;
      p50Us: number;
      p99Us: number;
    };
    const ok = Math.max(0, s.requests - s.status);
    const elapsedSeconds = s.durationUs / 1e6;
    return {
      ok,
      served: s.requests,
      failed: s.status + s.socket,
      elapsedSeconds,
      requestsPerSecond: ok / elapsedSeconds,
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      firstFailure:
        s.status > 0 ? `${s.status} responses outside 2xx/3xx` : s.socket > 0 ? `${s.socket} socket errors or timeouts` : undefined,
      clientCpuSeconds: cpuSeconds,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * One h2load run over cleartext HTTP/2 (prior knowledge), bounded by -D: by default `concurrency`
 * connections with one stream each, so it compares with the HTTP/1.1 runs at the same count; `body`
 * (h2load -d, which makes it a POST) is sent as is. Latencies come from its per-request log (µs).
 */
export async function runH2load(scenario: HttpScenario, bounds: LoadBounds, streamsPerConnection = 1, body?: Buffer): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-h2load-'));
  try {
    const logFile = join(dir, 'requests.tsv');
    const seconds = Math.max(1, Math.round(bounds.durationMs / 1000));
    const connections = Math.max(1, Math.round(bounds.concurrency / streamsPerConnection));
    const args = [
      'h2load',
      '-c',
      String(connections),
      '-m',
      String(streamsPerConnection),
      '-t',
      '1',
      '-D',
      String(seconds),
      '--log-file',
      logFile,
    ];
    if (body !== undefined) {
      await writeFile(join(dir, 'body.bin'), body);
      args.push('-d', join(dir, 'body.bin'));
    }
    for (const [name, value] of Object.entries(scenario.headers)) args.push('-H', `${name}: ${value}`);
    const { stdout, failure: noSummary, cpuSeconds } = await runTool([...args, scenario.url], seconds);
    const finished = /finished in ([\d.]+)s/.exec(stdout);
    if (finished === null) throw new Error(noSummary);
    const latencies: number[] = [];
    let served = 0;
    for (const line of (await readFile(logFile, 'utf8')).split('\n')) {
      const [, status, micros] = line.split('\t');
      if (status === undefined || micros === undefined) continue;
      served += 1;
      if (status.startsWith('2')) latencies.push(Number(micros) / 1000);
    }
    const errored = Number(/(\d+) errored/.exec(stdout)?.[1] ?? 0) + Number(/(\d+) timeout/.exec(stdout)?.[1] ?? 0);
    const failure =
      served > latencies.length
        ? `${served - latencies.length} responses outside 2xx`
        : errored > 0
          ? `${errored} streams errored or timed out`
          : undefined;
    const result = fromLatencies(latencies, served, Number(finished[1]), failure, cpuSeconds);
    return { ...result, failed: result.failed + errored };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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

/** Three GetOrder calls, the same token and id, each of which must answer gRPC OK: a gRPC error would be an HTTP 200 to h2load. */
async function probeGrpc(port: number, token: string, message: Buffer): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const reply = await rawGrpc(`http://127.0.0.1:${port}`, '/ordersv1.Orders/GetOrder', message, { authorization: `Bearer ${token}` });
    if (reply.grpcStatus !== '0')
      throw new Error(`GetOrder probe failed: grpc-status ${reply.grpcStatus ?? 'none'} ${reply.grpcMessage ?? ''}`);
  }
}

/** GetOrder by h2load: one connection with `concurrency` streams, as a gRPC client's one channel. */
export async function runGrpcLoad(port: number, token: string, orderId: string, bounds: LoadBounds): Promise<LoadResult> {
  const message = grpcFrame(encodeRequest('GetOrder', { id: orderId }));
  await probeGrpc(port, token, message);
  const headers = { 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${token}` };
  return runH2load(
    { method: 'POST', url: `http://127.0.0.1:${port}/ordersv1.Orders/GetOrder`, headers },
    bounds,
    bounds.concurrency,
    message,
  );
}
