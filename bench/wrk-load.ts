import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childCpuSeconds, quote, runTimed } from './h2load-load.ts';
import type { HttpScenario, LoadBounds, LoadResult } from './load-result.ts';

/**
 * wrk's summary as one JSON line from its done() hook: requests completed, the error classes, and
 * latency percentiles in µs from its own histogram (1 µs resolution).
 */
const DONE_HOOK = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
`;

function luaString(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function script(scenario: HttpScenario): string {
  const lines = [`wrk.method = ${luaString(scenario.method)}`];
  for (const [name, value] of Object.entries(scenario.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (scenario.body !== undefined) lines.push(`wrk.body = ${luaString(scenario.body)}`);
  return `${lines.join('\n')}\n${DONE_HOOK}`;
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

/**
 * One wrk run (one thread, `concurrency` keep-alive connections), bounded by time: wrk stops at
 * -d on its own; the bench's own timeout kills it if it does not. Pinned to `cpu` with taskset when
 * given. Its CPU comes from the shell's `times` (the generator's own share, as the other generators
 * report it). Responses outside 2xx/3xx are counted as failed (wrk's "status" errors).
 */
export async function runWrk(scenario: HttpScenario, bounds: LoadBounds, cpu: string | undefined): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-wrk-'));
  try {
    const file = join(dir, 'scenario.lua');
    await writeFile(file, script(scenario));
    const seconds = Math.max(1, Math.round(bounds.durationMs / 1000));
    const wrk = ['wrk', '-t1', `-c${bounds.concurrency}`, `-d${seconds}s`, '--timeout', '10s', '-s', file, scenario.url];
    const command = `${cpu === undefined ? '' : `taskset -c ${cpu} `}${wrk.map(quote).join(' ')}`;
    const { stdout, stderr, code } = await runTimed(command, (seconds + 30) * 1000);
    const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
    if (line === undefined) throw new Error(`wrk gave no summary (exit ${code}): ${stderr.trim().slice(-300) || stdout.trim().slice(-300)}`);
    const s = JSON.parse(line.slice('WRK_JSON '.length)) as WrkSummary;
    const socketErrors = s.connect + s.read + s.write + s.timeout;
    const ok = Math.max(0, s.requests - s.status);
    const elapsedSeconds = s.durationUs / 1e6;
    return {
      ok,
      served: s.requests,
      failed: s.status + socketErrors,
      elapsedSeconds,
      requestsPerSecond: ok / elapsedSeconds,
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      firstFailure: s.status > 0 ? `${s.status} responses outside 2xx/3xx` : socketErrors > 0 ? `${socketErrors} socket errors or timeouts` : undefined,
      clientCpuSeconds: childCpuSeconds(stdout),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
