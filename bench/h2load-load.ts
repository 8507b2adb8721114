import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpScenario, LoadBounds, LoadResult } from './load-result.ts';
import { percentiles } from './percentiles.ts';

/** `times` of a shell: the second line is the children's user and system time ("0m1.234s 0m0.056s"). */
export function childCpuSeconds(timesOutput: string): number {
  const line = timesOutput.trim().split('\n').at(-1) ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return parts.length === 2 ? (parts[0] as number) + (parts[1] as number) : Number.NaN;
}

/** A command under bash with `times` after it (the generator's CPU), killed if it outlives timeoutMs. */
export function runTimed(command: string, timeoutMs: number): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `${command}; times`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

export const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

export interface H2loadShape {
  /** Streams per connection (-m); `concurrency` is then the total number of streams in flight. Default 1. */
  readonly streamsPerConnection?: number;
  /** A request body sent as is (h2load -d, which makes it a POST): a gRPC message with its 5-byte prefix. */
  readonly body?: Buffer;
}

/**
 * One h2load run over cleartext HTTP/2 (prior knowledge), bounded by -D: by default `concurrency`
 * connections with one stream each, so it compares with the HTTP/1.1 runs at the same count. Latency
 * percentiles come from its per-request log (µs); 2xx answers are ok, anything else failed. A gRPC
 * error also arrives as HTTP 200 (its status is in the trailers): callers of gRPC runs probe first.
 */
export async function runH2load(scenario: HttpScenario, bounds: LoadBounds, cpu: string | undefined, shape: H2loadShape = {}): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-h2load-'));
  try {
    const logFile = join(dir, 'requests.tsv');
    const seconds = Math.max(1, Math.round(bounds.durationMs / 1000));
    const streams = shape.streamsPerConnection ?? 1;
    const connections = Math.max(1, Math.round(bounds.concurrency / streams));
    const args = ['h2load', '-c', String(connections), '-m', String(streams), '-t', '1', '-D', String(seconds), '--log-file', logFile];
    if (shape.body !== undefined) {
      const bodyFile = join(dir, 'body.bin');
      await writeFile(bodyFile, shape.body);
      args.push('-d', bodyFile);
    }
    for (const [name, value] of Object.entries(scenario.headers)) args.push('-H', `${name}: ${value}`);
    args.push(scenario.url);
    const command = `${cpu === undefined ? '' : `taskset -c ${cpu} `}${args.map(quote).join(' ')}`;
    const { stdout, stderr, code } = await runTimed(command, (seconds + 30) * 1000);
    const finished = /finished in ([\d.]+)s/.exec(stdout);
    if (finished === null) throw new Error(`h2load gave no summary (exit ${code}): ${stderr.trim().slice(-300) || stdout.trim().slice(-300)}`);
    const latencies: number[] = [];
    let served = 0;
    let failed = 0;
    for (const line of (await readFile(logFile, 'utf8')).split('\n')) {
      const [, status, micros] = line.split('\t');
      if (status === undefined || micros === undefined) continue;
      served += 1;
      if (status.startsWith('2')) latencies.push(Number(micros) / 1000);
      else failed += 1;
    }
    const errored = Number(/(\d+) errored/.exec(stdout)?.[1] ?? 0) + Number(/(\d+) timeout/.exec(stdout)?.[1] ?? 0);
    const elapsedSeconds = Number(finished[1]);
    const [p50, p99] = percentiles(latencies, [50, 99]);
    return {
      ok: latencies.length,
      served,
      failed: failed + errored,
      elapsedSeconds,
      requestsPerSecond: latencies.length / elapsedSeconds,
      p50Ms: p50 as number,
      p99Ms: p99 as number,
      firstFailure: failed > 0 ? `${failed} responses outside 2xx` : errored > 0 ? `${errored} streams errored or timed out` : undefined,
      clientCpuSeconds: childCpuSeconds(stdout),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
