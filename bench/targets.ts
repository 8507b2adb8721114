import type { BenchRun, Measurement, ScenarioId } from './measurement.ts';
import { median } from './percentiles.ts';

export const FIXED_CONCURRENCY = 32;
/** "50 MB" read as 50 × 10^6 bytes (the stricter reading than MiB). */
export const SESSION_HEAP_LIMIT_BYTES = 50_000_000;
export const STARTUP_LIMIT_MS = 1_500;
/** Issue 16: GET /orders?limit=20&offset=10000, 20,000 orders for the user, real Postgres, one connection. */
export const LIST_DEEP_P50_LIMIT_MS = 3;

/** Issue 16's GET targets: CPU per request against the Fastify peer, bare node:http, and the stdlib transport. */
export const PEER_CPU_LIMIT = 0.75;
export const BARE_CPU_LIMIT = 2.0;
export const TRANSPORT_CPU_LIMIT = 1.2;
export const PEER_SERVER = 'fastify-peer';

export interface TargetVerdict {
  readonly target: string;
  readonly subject: string;
  readonly measured: string;
  readonly met: boolean | undefined;
}

export function find(run: BenchRun, server: string, scenario: ScenarioId, concurrency = FIXED_CONCURRENCY, logLevel?: string): Measurement | undefined {
  return run.measurements.find(
    (m) =>
      m.pairedFor === undefined &&
      m.server === server &&
      m.scenario === scenario &&
      m.concurrency === concurrency &&
      (logLevel === undefined ? m.logLevel !== 'error' : m.logLevel === logLevel),
  );
}

/** Control runs of `server`/`scenario` taken next to `pairedFor`. */
export function findPaired(run: BenchRun, server: string, scenario: ScenarioId, pairedFor: string): Measurement[] {
  return run.measurements.filter((m) => m.server === server && m.scenario === scenario && m.pairedFor === pairedFor);
}

/** Mean req/s of the runs that have a result (a comparison side measured more than once). */
export function meanRps(measurements: readonly (Measurement | undefined)[]): number {
  const values = measurements.map(rps).filter(Number.isFinite);
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export const pairKey = (server: string, scenario: ScenarioId, logLevel = 'info'): string => `${server} ${scenario}${logLevel === 'info' ? '' : ` ${logLevel}`}`;

export function rps(m: Measurement | undefined): number {
  return m?.result === undefined || m.skipped !== undefined ? Number.NaN : m.result.requestsPerSecond;
}

export function baselineRps(run: BenchRun, concurrency: number): number {
  return rps(find(run, 'baseline', 'get', concurrency));
}

/** Medians over a server's rounds of one comparison: CPU µs per request, req/s, p99 ms. */
export interface RoundFigures {
  readonly cpuUs: number;
  readonly rps: number;
  readonly p99Ms: number;
  readonly n: number;
}

export interface GetTrio {
  readonly subject: RoundFigures;
  readonly peer: RoundFigures | undefined;
  readonly bare: RoundFigures;
  readonly rounds: number;
}

function roundFigures(ms: readonly Measurement[]): RoundFigures {
  const ok = ms.filter((m) => m.result !== undefined && m.skipped === undefined);
  return {
    cpuUs: median(ok.map((m) => m.cpuSecondsPer1k * 1000)),
    rps: median(ok.map(rps)),
    p99Ms: median(ok.map((m) => m.result?.p99Ms ?? Number.NaN)),
    n: ok.length,
  };
}

/** The interleaved GET rounds of `server` (bench/run.ts interleavedGet): subject, Fastify peer, bare node:http. */
export function getTrio(run: BenchRun, server: string): GetTrio {
  const key = pairKey(server, 'get');
  const of = (name: string): Measurement[] => run.measurements.filter((m) => m.server === name && m.scenario === 'get' && m.pairedFor === key);
  const subject = roundFigures(of(server));
  const peerRuns = of(PEER_SERVER);
  return { subject, peer: peerRuns.length === 0 ? undefined : roundFigures(peerRuns), bare: roundFigures(of('baseline')), rounds: subject.n };
}

const times = (ratio: number): string => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a');
const us = (value: number | undefined): string => (value !== undefined && Number.isFinite(value) ? `${value.toFixed(0)} µs` : 'n/a');
const pct = (ratio: number): string => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(0)}%` : 'n/a');
const ms = (value: number | undefined): string => (value !== undefined && Number.isFinite(value) ? `${value.toFixed(2)} ms` : 'n/a');
const verdict = (ok: boolean, known: boolean): boolean | undefined => (known ? ok : undefined);

/** The brief's targets, each judged on this run's numbers (undefined = could not be measured). */
export function judgeTargets(run: BenchRun): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const servers = [...new Set(run.measurements.map((m) => m.server))];
  const base = baselineRps(run, FIXED_CONCURRENCY);

  // The HTTP transports: the gRPC executable's REST side is an HTTP transport too. Judged on the
  // medians of the interleaved rounds (bare node:http, Fastify peer, subject; bench/run.ts interleavedGet).
  const stdlib = getTrio(run, 'stdlib/real');
  for (const server of servers.filter((s) => s.endsWith('/real'))) {
    const trio = getTrio(run, server);
    const ratio = trio.subject.rps / trio.bare.rps;
    out.push({
      target: 'GET /orders/{id} cache hit, real Redis: ≥ 50% of baseline req/s at 32 connections',
      subject: server,
      measured: `${pct(ratio)} (${trio.subject.rps.toFixed(0)} vs ${trio.bare.rps.toFixed(0)} req/s, medians of ${trio.rounds} interleaved rounds)`,
      met: verdict(ratio >= 0.5, Number.isFinite(ratio)),
    });
    out.push({
      target: 'GET /orders/{id} cache hit, real Redis: p99 < 10 ms at 32 connections',
      subject: server,
      measured: `${ms(trio.subject.p99Ms)} (median of ${trio.rounds} rounds)`,
      met: verdict(trio.subject.p99Ms < 10, Number.isFinite(trio.subject.p99Ms)),
    });
    if (server === 'stdlib/real') {
      const vsPeer = trio.subject.cpuUs / (trio.peer?.cpuUs ?? Number.NaN);
      out.push({
        target: `GET cache hit: server CPU per request ≤ ${PEER_CPU_LIMIT} × the Fastify peer's`,
        subject: server,
        measured: `${times(vsPeer)} (${us(trio.subject.cpuUs)} vs ${us(trio.peer?.cpuUs)})`,
        met: verdict(vsPeer <= PEER_CPU_LIMIT, Number.isFinite(vsPeer)),
      });
      const vsBare = trio.subject.cpuUs / trio.bare.cpuUs;
      out.push({
        target: `GET cache hit: server CPU per request ≤ ${BARE_CPU_LIMIT} × bare node:http's`,
        subject: server,
        measured: `${times(vsBare)} (${us(trio.subject.cpuUs)} vs ${us(trio.bare.cpuUs)})`,
        met: verdict(vsBare <= BARE_CPU_LIMIT, Number.isFinite(vsBare)),
      });
    } else {
      const vsStdlib = trio.subject.cpuUs / stdlib.subject.cpuUs;
      out.push({
        target: `GET cache hit: server CPU per request ≤ ${TRANSPORT_CPU_LIMIT} × stdlib's`,
        subject: server,
        measured: `${times(vsStdlib)} (${us(trio.subject.cpuUs)} vs ${us(stdlib.subject.cpuUs)})`,
        met: verdict(vsStdlib <= TRANSPORT_CPU_LIMIT, Number.isFinite(vsStdlib)),
      });
    }
    const quiet = find(run, server, 'get', FIXED_CONCURRENCY, 'error');
    if (quiet?.result !== undefined) {
      const quietPaired = meanRps(findPaired(run, 'baseline', 'get', pairKey(server, 'get', 'error')));
      const quietRatio = rps(quiet) / (Number.isFinite(quietPaired) ? quietPaired : base);
      out.push({
        target: '… same, with LOG_LEVEL=error (no request log line)',
        subject: server,
        measured: `${pct(quietRatio)}, p99 ${ms(quiet.result.p99Ms)}`,
        met: verdict(quietRatio >= 0.5 && quiet.result.p99Ms < 10, Number.isFinite(quietRatio)),
      });
    }
  }

  for (const server of servers.filter((s) => s.startsWith('grpc/'))) {
    const grpcGet = rps(find(run, server, 'grpc-get'));
    // The REST GET measured before and again right after the gRPC run.
    const restGet = meanRps([find(run, server, 'get'), ...findPaired(run, server, 'get', pairKey(server, 'grpc-get'))]);
    const ratio = grpcGet / restGet;
    out.push({
      target: 'gRPC GetOrder: ≥ 50% of the REST GET of the same process',
      subject: server,
      measured: `${pct(ratio)} (${grpcGet.toFixed(0)} vs ${restGet.toFixed(0)} req/s, REST measured before and after)`,
      met: verdict(ratio >= 0.5, Number.isFinite(ratio)),
    });
  }

  for (const server of servers.filter((s) => s.endsWith('/real'))) {
    const post = rps(find(run, server, 'post'));
    const bare = meanRps([find(run, server, 'bare-insert'), ...findPaired(run, server, 'bare-insert', pairKey(server, 'post'))]);
    const ratio = post / bare;
    out.push({
      target: 'POST /orders (Postgres + Redis + NATS): ≥ 50% of a bare INSERT, same pg Pool, 32 concurrent',
      subject: server,
      measured: `${pct(ratio)} (${post.toFixed(0)} vs ${bare.toFixed(0)} per s, INSERT measured before and after)`,
      met: verdict(ratio >= 0.5, Number.isFinite(ratio)),
    });
  }

  const deep = find(run, 'stdlib/real', 'list-offset-10000', 1);
  const deepP50 = deep?.result?.p50Ms;
  out.push({
    target: `List at offset 10,000 (20,000 orders), real Postgres: p50 ≤ ${LIST_DEEP_P50_LIMIT_MS} ms`,
    subject: 'stdlib/real, one connection',
    measured: ms(deepP50),
    met: verdict((deepP50 ?? Number.NaN) <= LIST_DEEP_P50_LIMIT_MS, deepP50 !== undefined && Number.isFinite(deepP50)),
  });

  const sessions = run.scale.sessions;
  if ('error' in sessions) {
    out.push({ target: '50,000 live sessions < 50 MB heap', subject: 'SessionScope', measured: sessions.error, met: undefined });
  } else {
    const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
    out.push({
      target: '50,000 live sessions < 50 MB heap',
      subject: 'lingering (between requests)',
      measured: `${mb(sessions.lingering.totalBytes)} (${sessions.lingering.bytesPerSession.toFixed(0)} B/session)`,
      met: sessions.lingering.totalBytes < SESSION_HEAP_LIMIT_BYTES,
    });
    out.push({
      target: '50,000 live sessions < 50 MB heap',
      subject: 'held (request in flight, own AbortController)',
      measured: `${mb(sessions.held.totalBytes)} (${sessions.held.bytesPerSession.toFixed(0)} B/session)`,
      met: sessions.held.totalBytes < SESSION_HEAP_LIMIT_BYTES,
    });
  }

  const embedded = run.scale.startup.find((s) => s.mode === 'embedded');
  const startup = median(embedded?.runsMs ?? []);
  out.push({
    target: 'Start-up to ready < 1.5 s, embedded',
    subject: 'orders-stdlib --embedded',
    measured: Number.isFinite(startup) ? `${startup.toFixed(0)} ms (median of ${embedded?.runsMs.length})` : (embedded?.error ?? 'not measured'),
    met: verdict(startup < STARTUP_LIMIT_MS, Number.isFinite(startup)),
  });
  return out;
}
