// reports/bench.md from one run: the issue's targets judged on this run's numbers, then the tables.
import { SCENARIO_TITLES, type BenchRun, type Measurement, type ScenarioId } from './measure.ts';
import { median } from './percentiles.ts';

export const FIXED_CONCURRENCY = 32;
export const PEER_SERVER = 'fastify-peer';
/** The subject the other HTTP transports are judged against (TRANSPORT_CPU_LIMITS: ≤ 1.5 × its CPU per GET for Koa, 1.2 × for the one-port REST side). */
const STDLIB_REAL = 'stdlib/real';
/** "50 MB" read as 50 × 10^6 bytes (the stricter reading than MiB). */
const SESSION_HEAP_LIMIT_BYTES = 50_000_000;
const STARTUP_LIMIT_MS = 1_500;
/** GET /orders?limit=20&offset=10000, 20,000 orders for the user, real Postgres, one connection. */
const LIST_DEEP_P50_LIMIT_MS = 3;
/** The GET targets: CPU per request against the Fastify peer, bare node:http, and the stdlib transport. */
const PEER_CPU_LIMIT = 0.75;
const BARE_CPU_LIMIT = 2.0;
/**
 * Per transport against stdlib: Koa as its documentation writes it (app.callback(), router.routes())
 * may cost up to 1.5 × (its own dispatch, on-finished, delegates); the one-port REST side is
 * orders-stdlib's own handler, so 1.2 ×.
 */
const TRANSPORT_CPU_LIMITS: Readonly<Record<string, number>> = { 'koa/real': 1.5 };
const TRANSPORT_CPU_LIMIT = 1.2;
const RATIO_SCENARIOS: readonly ScenarioId[] = ['get', 'get-h2c', 'list', 'post', 'login', 'grpc-get'];

export const pairKey = (server: string, scenario: ScenarioId, logLevel = 'info'): string =>
  `${server} ${scenario}${logLevel === 'info' ? '' : ` ${logLevel}`}`;

/** The primary run of `server`/`scenario` (not a control run); LOG_LEVEL=error only when asked for. */
export function find(
  run: BenchRun,
  server: string,
  scenario: ScenarioId,
  concurrency = FIXED_CONCURRENCY,
  logLevel?: string,
): Measurement | undefined {
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
function findPaired(run: BenchRun, server: string, scenario: ScenarioId, pairedFor: string): Measurement[] {
  return run.measurements.filter((m) => m.server === server && m.scenario === scenario && m.pairedFor === pairedFor);
}

export function rps(m: Measurement | undefined): number {
  return m?.result === undefined || m.skipped !== undefined ? Number.NaN : m.result.requestsPerSecond;
}

/** Mean req/s of the runs that have a result (a comparison side measured more than once). */
function meanRps(measurements: readonly (Measurement | undefined)[]): number {
  const values = measurements.map(rps).filter(Number.isFinite);
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Medians over a server's rounds of one comparison: CPU µs per request, req/s, p99 ms. */
function roundFigures(ms: readonly Measurement[]): { cpuUs: number; rps: number; p99Ms: number; n: number } {
  const ok = ms.filter((m) => m.result !== undefined && m.skipped === undefined);
  return {
    cpuUs: median(ok.map((m) => m.cpuSecondsPer1k * 1000)),
    rps: median(ok.map(rps)),
    p99Ms: median(ok.map((m) => m.result?.p99Ms ?? Number.NaN)),
    n: ok.length,
  };
}

/** The interleaved GET rounds of `server` (bench/run.ts interleavedGet): subject, Fastify peer, bare node:http. */
function getTrio(run: BenchRun, server: string) {
  const of = (name: string): Measurement[] => findPaired(run, name, 'get', pairKey(server, 'get'));
  const peer = of(PEER_SERVER);
  const stdlib = server === STDLIB_REAL ? [] : of(STDLIB_REAL);
  return {
    subject: roundFigures(of(server)),
    peer: peer.length === 0 ? undefined : roundFigures(peer),
    bare: roundFigures(of('baseline')),
    stdlib: stdlib.length === 0 ? undefined : roundFigures(stdlib),
  };
}

const fixed = (value: number | undefined, digits: number, unit = '', none = 'n/a'): string =>
  value !== undefined && Number.isFinite(value) ? `${value.toFixed(digits)}${unit}` : none;
const times = (ratio: number): string => fixed(ratio, 2, '×');
const us = (value: number | undefined): string => fixed(value, 0, ' µs');
const pct = (ratio: number): string => fixed(ratio * 100, 0, '%');
const ms = (value: number | undefined): string => fixed(value, 2, ' ms');

/** A verdict on `value` (a ratio or figure): met undefined (not measured) when it is not a finite number. */
function verdict(
  target: string,
  subject: string,
  measured: string,
  value: number | undefined,
  ok: (v: number) => boolean,
): { target: string; subject: string; measured: string; met: boolean | undefined } {
  return { target, subject, measured, met: value !== undefined && Number.isFinite(value) ? ok(value) : undefined };
}

/** The brief's targets, each judged on this run's numbers. */
export function judgeTargets(run: BenchRun): ReturnType<typeof verdict>[] {
  const out: ReturnType<typeof verdict>[] = [];
  const servers = [...new Set(run.measurements.map((m) => m.server))];
  const realServers = servers.filter((s) => s.endsWith('/real'));

  // The HTTP transports: the gRPC executable's REST side is an HTTP transport too. Judged on the
  // medians of the interleaved rounds (bare node:http, Fastify peer, subject; bench/run.ts interleavedGet).
  const stdlibOwn = getTrio(run, STDLIB_REAL).subject;
  for (const server of realServers) {
    const { subject, peer, bare, stdlib } = getTrio(run, server);
    const share = subject.rps / bare.rps;
    const get = 'GET /orders/{id} cache hit, real Redis:';
    out.push(
      verdict(
        `${get} ≥ 50% of baseline req/s at 32 connections`,
        server,
        `${pct(share)} (${subject.rps.toFixed(0)} vs ${bare.rps.toFixed(0)} req/s, medians of ${subject.n} interleaved rounds)`,
        share,
        (r) => r >= 0.5,
      ),
    );
    out.push(
      verdict(
        `${get} p99 < 10 ms at 32 connections`,
        server,
        `${ms(subject.p99Ms)} (median of ${subject.n} rounds)`,
        subject.p99Ms,
        (p) => p < 10,
      ),
    );
    const cpu = (limit: number, of: string, other: number | undefined, how = ''): ReturnType<typeof verdict> =>
      verdict(
        `GET cache hit: server CPU per request ≤ ${limit} × ${of}`,
        server,
        `${times(subject.cpuUs / (other ?? Number.NaN))} (${us(subject.cpuUs)} vs ${us(other)}${how})`,
        subject.cpuUs / (other ?? Number.NaN),
        (r) => r <= limit,
      );
    if (server === STDLIB_REAL)
      out.push(cpu(PEER_CPU_LIMIT, "the Fastify peer's", peer?.cpuUs), cpu(BARE_CPU_LIMIT, "bare node:http's", bare.cpuUs));
    // orders-stdlib run in the same interleaved rounds when it could be (bench/run.ts), else its own rounds.
    else if (stdlib !== undefined)
      out.push(
        cpu(
          TRANSPORT_CPU_LIMITS[server] ?? TRANSPORT_CPU_LIMIT,
          "stdlib's",
          stdlib.cpuUs,
          `, medians of ${Math.min(subject.n, stdlib.n)} interleaved rounds`,
        ),
      );
    else out.push(cpu(TRANSPORT_CPU_LIMITS[server] ?? TRANSPORT_CPU_LIMIT, "stdlib's", stdlibOwn.cpuUs, ', stdlib from its own rounds'));
    const quiet = find(run, server, 'get', FIXED_CONCURRENCY, 'error');
    if (quiet?.result !== undefined) {
      const quietPaired = meanRps(findPaired(run, 'baseline', 'get', pairKey(server, 'get', 'error')));
      const ratio = rps(quiet) / (Number.isFinite(quietPaired) ? quietPaired : rps(find(run, 'baseline', 'get')));
      const p99 = quiet.result.p99Ms;
      out.push(
        verdict(
          '… same, with LOG_LEVEL=error (no request log line)',
          server,
          `${pct(ratio)}, p99 ${ms(p99)}`,
          ratio,
          (r) => r >= 0.5 && p99 < 10,
        ),
      );
    }
  }

  // The service's own gRPC server only: its peers (bench/grpc-peers) have no REST side.
  for (const server of servers.filter((s) => s.startsWith('grpc/') && !s.includes(' peer:'))) {
    const grpcGet = rps(find(run, server, 'grpc-get'));
    // The REST GET measured before and again right after the gRPC run.
    const restGet = meanRps([find(run, server, 'get'), ...findPaired(run, server, 'get', pairKey(server, 'grpc-get'))]);
    const measured = `${pct(grpcGet / restGet)} (${grpcGet.toFixed(0)} vs ${restGet.toFixed(0)} req/s, REST measured before and after)`;
    out.push(verdict('gRPC GetOrder: ≥ 50% of the REST GET of the same process', server, measured, grpcGet / restGet, (r) => r >= 0.5));
  }

  for (const server of realServers) {
    const posts = [find(run, server, 'post'), ...findPaired(run, server, 'post', pairKey(server, 'post'))].map(rps).filter(Number.isFinite);
    const bares = [find(run, server, 'bare-insert'), ...findPaired(run, server, 'bare-insert', pairKey(server, 'post'))]
      .map(rps)
      .filter(Number.isFinite);
    const post = median(posts);
    const bare = median(bares);
    const how =
      posts.length > 1
        ? `medians of ${posts.length} POST and ${bares.length} INSERT runs, interleaved`
        : 'INSERT measured before and after';
    const measured = `${pct(post / bare)} (${post.toFixed(0)} vs ${bare.toFixed(0)} per s, ${how})`;
    out.push(
      verdict(
        'POST /orders (Postgres + Redis + NATS): ≥ 50% of a bare INSERT, same pg Pool, 32 concurrent',
        server,
        measured,
        post / bare,
        (r) => r >= 0.5,
      ),
    );
  }

  const deepP50 = find(run, 'stdlib/real', 'list-offset-10000', 1)?.result?.p50Ms;
  out.push(
    verdict(
      `List at offset 10,000 (20,000 orders), real Postgres: p50 ≤ ${LIST_DEEP_P50_LIMIT_MS} ms`,
      'stdlib/real, one connection',
      ms(deepP50),
      deepP50,
      (p) => p <= LIST_DEEP_P50_LIMIT_MS,
    ),
  );

  const sessions = run.scale.sessions;
  const heapTarget = '50,000 live sessions < 50 MB heap';
  if ('error' in sessions) out.push({ target: heapTarget, subject: 'SessionScope', measured: sessions.error, met: undefined });
  else {
    for (const [subject, figures] of [
      ['lingering (between requests)', sessions.lingering],
      ['held (request in flight, own AbortController)', sessions.held],
    ] as const) {
      const measured = `${(figures.totalBytes / 1e6).toFixed(1)} MB (${figures.bytesPerSession.toFixed(0)} B/session)`;
      out.push(verdict(heapTarget, subject, measured, figures.totalBytes, (bytes) => bytes < SESSION_HEAP_LIMIT_BYTES));
    }
  }

  const embedded = run.scale.startup.find((s) => s.mode === 'embedded');
  const startup = median(embedded?.runsMs ?? []);
  const measured = Number.isFinite(startup)
    ? `${startup.toFixed(0)} ms (median of ${embedded?.runsMs.length})`
    : (embedded?.error ?? 'not measured');
  out.push(verdict('Start-up to ready < 1.5 s, embedded', 'orders-stdlib --embedded', measured, startup, (t) => t < STARTUP_LIMIT_MS));
  return out;
}

const n = (value: number | undefined, digits = 0): string => fixed(value, digits, '', '–');
const x = (ratio: number, digits = 2): string => fixed(ratio, digits, '×', '–');

const share = (value: number, base: number): string => fixed((value / base) * 100, value / base < 0.01 ? 2 : 0, '%', '–');

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

/** Each HTTP transport against the Fastify peer and bare node:http, medians of the interleaved rounds. */
function peerSection(run: BenchRun, servers: readonly string[]): string[] {
  const rows = servers
    .filter((server) => !server.includes(' peer:'))
    .map((server) => ({ server, ...getTrio(run, server) }))
    .filter(({ subject }) => subject.n > 0);
  if (rows.length === 0) return [];
  return [
    '',
    '## GET /orders/{id} (cache hit): this service ÷ the Fastify peer ÷ bare node:http',
    '',
    `Rounds of bare node:http, the Fastify peer (bench/fastify-peer.ts: Fastify 5 + @fastify/jwt + ioredis + pino + prom-client, the same work; real Redis only), for Koa and the one-port REST side orders-stdlib too (real backends), and the subject, ` +
      `the order rotated each round, ${FIXED_CONCURRENCY} connections, each run ${run.settings.durationMs / 2} ms after a short warm-up; medians per server. ` +
      'CPU µs/request = the server process’s own CPU (process.cpuUsage) ÷ the requests it answered.',
    '',
    ...table(
      [
        'server',
        'rounds',
        'CPU µs/req',
        'peer µs/req',
        'bare µs/req',
        'stdlib µs/req',
        '÷ peer (CPU)',
        '÷ bare (CPU)',
        '÷ stdlib (CPU)',
        'req/s',
        'peer req/s',
        'bare req/s',
        'p99 ms',
        'peer p99 ms',
      ],
      rows.map(({ server, subject, peer, bare, stdlib }) => [
        server,
        String(subject.n),
        n(subject.cpuUs),
        n(peer?.cpuUs),
        n(bare.cpuUs),
        n(stdlib?.cpuUs),
        x(subject.cpuUs / (peer?.cpuUs ?? Number.NaN)),
        x(subject.cpuUs / bare.cpuUs),
        x(subject.cpuUs / (stdlib?.cpuUs ?? Number.NaN)),
        n(subject.rps),
        n(peer?.rps),
        n(bare.rps),
        n(subject.p99Ms, 2),
        n(peer?.p99Ms, 2),
      ]),
    ),
  ];
}

/** Server CPU per GetOrder call of the service's gRPC server and of the peers measured right after it in the same child. */
function grpcPeerSection(run: BenchRun): string[] {
  const rows = run.measurements.filter((m) => m.scenario === 'grpc-get' && m.pairedFor === undefined && m.result !== undefined);
  if (!rows.some((m) => m.server.includes(' peer:'))) return [];
  return [
    '',
    '## gRPC GetOrder: this server and its peers (same child, one after the other)',
    '',
    'CPU µs per call = server CPU-seconds / calls answered. Peers: a plain @grpc/grpc-js server and Connect (as the service once used it, and tuned), doing the same work on the same core.',
    '',
    ...table(
      ['server', 'calls/s', 'p50 ms', 'p99 ms', 'CPU µs per call', 'vs grpc-js'],
      rows.map((m) => {
        const grpcJs = rows.find((x) => x.server === `${m.server.split(' peer:')[0]} peer:grpc-js`)?.cpuSecondsPer1k ?? Number.NaN;
        return [
          m.server,
          n(m.result?.requestsPerSecond),
          n(m.result?.p50Ms, 2),
          n(m.result?.p99Ms, 2),
          n(m.cpuSecondsPer1k * 1000),
          x(m.cpuSecondsPer1k / grpcJs),
        ];
      }),
    ),
  ];
}

export function rawRow(m: Measurement): string[] {
  const r = m.result;
  return [
    m.pairedFor === undefined ? m.server : `${m.server} (control for ${m.pairedFor})`,
    SCENARIO_TITLES[m.scenario],
    String(m.concurrency),
    m.logLevel,
    r === undefined ? `skipped: ${m.skipped ?? ''}` : n(r.requestsPerSecond),
    n(r?.p50Ms, 2),
    n(r?.p99Ms, 2),
    n(m.cpuSecondsPer1k, 3),
    n(m.peakRssBytes / 2 ** 20),
    r === undefined ? '' : `${r.ok}/${r.failed}`,
    r === undefined ? '' : `${n((r.clientCpuSeconds / r.elapsedSeconds) * 100)}%`,
    n(m.loadAverage, 2),
  ];
}

function scaleSection(run: BenchRun): string[] {
  const out = ['', '## Scale figures', ''];
  const sessions = run.scale.sessions;
  if ('error' in sessions) out.push(`Sessions: ${sessions.error}`);
  else {
    out.push(
      `Sessions: heapUsed after minus before creating ${sessions.cap.toLocaleString('en')} sessions on a fresh SessionScope, each with ${sessions.recent} recent ids ` +
        '(flat 36-character strings, as parsed from requests), after forced GC (`--expose-gc`).',
      '',
      ...table(
        ['state', 'heap total', 'bytes / session', 'acquire beyond the cap refused'],
        (
          [
            ['lingering (released, linger timer armed)', sessions.lingering],
            ['held (not released, own AbortController)', sessions.held],
          ] as const
        ).map(([state, f]) => [state, `${(f.totalBytes / 1e6).toFixed(1)} MB`, n(f.bytesPerSession), String(f.capRefused)]),
      ),
    );
  }
  const listRows = run.measurements.filter((x) => x.scenario === 'list-offset-0' || x.scenario === 'list-offset-10000');
  out.push(
    '',
    'List latency for a user holding 20,000 orders, one connection (stdlib transport; real Postgres vacuumed and analysed after seeding):',
    '',
  );
  out.push(
    ...table(
      ['server', 'query', 'p50 ms', 'p99 ms', 'req/s'],
      listRows.map((x) => [x.server, SCENARIO_TITLES[x.scenario], n(x.result?.p50Ms, 2), n(x.result?.p99Ms, 2), n(rps(x))]),
    ),
  );
  for (const server of new Set(listRows.map((x) => x.server))) {
    const ratio =
      (find(run, server, 'list-offset-10000', 1)?.result?.p50Ms ?? Number.NaN) /
      (find(run, server, 'list-offset-0', 1)?.result?.p50Ms ?? Number.NaN);
    if (!Number.isFinite(ratio)) continue;
    const why =
      ratio > 3 ? ' (OFFSET walks and discards the skipped index entries; keyset paging would not, but spec 4.1 fixes limit/offset)' : '';
    out.push('', `${server}: offset 10,000 takes ${n(ratio, 1)}× the p50 of offset 0${why}.`);
  }
  out.push(
    '',
    'Start-up: spawn `node bin/orders-stdlib.ts [--embedded]` → first 200 from the admin `/readyz` (includes Node start-up and type stripping).',
    '',
  );
  out.push(
    ...table(
      ['mode', 'runs (ms)', 'median ms', 'note'],
      run.scale.startup.map((s) => [s.mode, s.runsMs.map((x) => n(x)).join(', '), n(median(s.runsMs)), s.error ?? '']),
    ),
  );
  return out;
}

const METHOD_NOTES = [
  '- Measured and not applied: ioredis `enableAutoPipelining` (GET and POST unchanged): each HTTP request is parsed in its own tick, so at 32 connections nothing coalesces.',
  '- GET /orders/{id} cache hit: this service keeps a bounded in-process tier in front of Redis (rule SVC-near-cache: 10,000 orders, 30 s each, Redis still written on create and read on a near miss), so after the first read of the bench order its hits do not reach Redis; the Fastify peer reads Redis on every request, as a typical cache-aside implementation does. The spec allows the near tier (rule SVC-near-cache); the peer was written without one, as a typical team would.',
  '- Placement: each server child is pinned with `taskset -a` (all its threads) to one CPU and wrk/h2load (and the orchestrator) to the other; Postgres, Redis, NATS and whatever else runs on this shared machine are not pinned and land on both.',
  '- wrk counts answers outside 2xx/3xx as failed; its latency histogram has 1 µs resolution. wrk and h2load are bounded by time (-d / -D), killed by the bench if they overrun.',
  '- Servers are started exactly as the executables start them (startService), LOG_LEVEL=info (request logging is part of the product; the JSON lines go to /dev/null), RATE_LIMIT_RPS=1e9 (the limiter runs but never refuses). One GET row per real server is repeated with LOG_LEVEL=error.',
  '- Real backends: own schema `bench_<random>` (dropped by the child on stop, and again by the orchestrator), own Redis key prefix and NATS subject. Seeding goes through the repository port in the child and is not measured.',
  '- GET uses one user and one cached order (one session); POST one user; login one user with the production scrypt cost (N=16384), so login measures the hash.',
  '- The bare INSERT runs inside the server child, on the service’s own pg Pool (10 connections), with 32 concurrent callers: one single-row INSERT INTO orders per call, without HTTP, auth, the outbox, Redis or NATS. POST writes the order and its outbox event, and the creates of one event-loop turn share one statement (placement-coalescer.ts).',
  '- Ratios for the targets are taken side by side: the GET targets on the medians of interleaved rounds (bare node:http, Fastify peer, orders-stdlib for the other transports, subject), the REST GET again right after gRPC GetOrder, the bare INSERT before and after POST, and in a full run two more POST / bare INSERT pairs (medians of each side are compared). The tables of shares use the baseline measured at the start.',
];

export function renderMarkdown(run: BenchRun): string {
  const m = run.machine;
  const servers = [...new Set(run.measurements.map((x) => x.server).filter((s) => s !== 'baseline' && s !== PEER_SERVER))];
  const baseRow = find(run, 'baseline', 'get');
  const base32 = rps(baseRow);
  const out = [
    '# Benchmark report',
    '',
    `${run.settings.quick ? 'Quick run (`--quick`: short runs, 32 connections only; indicative, not for decisions)' : 'Full run'}, ` +
      `${run.startedAt}, ${n(run.wallSeconds)} s wall. Machine: ${m.nproc} × ${m.cpuModel} (nproc ${m.nproc}), ${m.memoryGiB} GiB, ` +
      `${m.platform}, Node ${m.node}. Load average at start ${n(run.loadAverageStart, 2)} (this machine is shared; see the last column of the raw table).`,
    '',
    `Each run: ${run.settings.warmupMs} ms warm-up (dropped), then ${run.settings.durationMs} ms (login: no warm-up, ${run.settings.loginDurationMs} ms). Every server is its own child process. ` +
      `HTTP/1.1 keep-alive load: wrk; h2c and gRPC: h2load, gRPC over one connection with \`concurrency\` streams (a gRPC client's one channel; a few gRPC calls first must all answer OK: h2load sees only HTTP statuses). ` +
      `Placement: ${run.pinning}. Loopback only.`,
  ];
  if (run.baselineEnd?.result !== undefined) {
    const end = run.baselineEnd.result.requestsPerSecond;
    out.push(
      '',
      `Noise: the baseline at 32 connections gave ${n(base32)} req/s at the start and ${n(end)} req/s at the end (${share(end, base32)} of the start).`,
    );
  }
  if (baseRow?.result !== undefined && baseRow.result.clientCpuSeconds / baseRow.result.elapsedSeconds > 0.8) {
    out.push(
      '',
      `The load generator used ${n((baseRow.result.clientCpuSeconds / baseRow.result.elapsedSeconds) * 100)}% of a core during the baseline run at ${FIXED_CONCURRENCY} connections: the baseline figure is partly the ` +
        'generator’s own ceiling, so the true server ceiling is higher and the shares below are, if anything, flattering. The server CPU per request table does not depend on the generator.',
    );
  }

  const status = (met: boolean | undefined): string => (met === undefined ? 'not measured' : met ? '**met**' : '**not met**');
  out.push(
    '',
    '## Targets',
    '',
    ...table(
      ['target', 'subject', 'measured', 'status'],
      judgeTargets(run).map((t) => [t.target, t.subject, t.measured, status(t.met)]),
    ),
  );
  out.push(...peerSection(run, servers), ...grpcPeerSection(run));

  const baseCpu = baseRow?.cpuSecondsPer1k ?? Number.NaN;
  const byScenario = (cell: (server: string, scenario: ScenarioId) => string): string[] =>
    table(
      ['server', ...RATIO_SCENARIOS.map((s) => SCENARIO_TITLES[s])],
      servers.map((server) => [server, ...RATIO_SCENARIOS.map((s) => cell(server, s))]),
    );
  out.push(
    '',
    `## Throughput as a share of the baseline (${FIXED_CONCURRENCY} connections, same run)`,
    '',
    `Baseline: bare node:http answering the same Order JSON with no routing, auth, I/O or logging: ${n(base32)} req/s at ${FIXED_CONCURRENCY} connections. ` +
      'gRPC GetOrder is also divided by the HTTP baseline here; its target compares it with the REST GET of the same process (above).',
    '',
    ...byScenario((server, s) => share(rps(find(run, server, s)), base32)),
    '',
    '### Server CPU per request, as a multiple of the baseline’s',
    '',
    `Not limited by the load generator (which shares this ${m.nproc}-core machine with the server and, for real backends, with Postgres, Redis and NATS): ` +
      `the baseline spends ${n(baseCpu * 1000, 0)} µs of CPU per request.`,
    '',
    ...byScenario((server, s) => x((find(run, server, s)?.cpuSecondsPer1k ?? Number.NaN) / baseCpu, 1)),
  );
  const sweep = run.settings.sweep;
  if (sweep.length > 1) {
    const baseAt = (c: number): number => rps(find(run, 'baseline', 'get', c));
    out.push('', '### GET /orders/{id} by concurrency, as a share of the baseline at the same concurrency', '');
    out.push(
      ...table(
        ['server', ...sweep.map((c) => `${c} conn.`)],
        [
          ['baseline (req/s)', ...sweep.map((c) => n(baseAt(c)))],
          ...servers.map((server) => [server, ...sweep.map((c) => share(rps(find(run, server, 'get', c)), baseAt(c)))]),
        ],
      ),
    );
  }

  out.push(
    '',
    '## Raw figures',
    '',
    'CPU-s/1k = CPU-seconds the server process spent per 1,000 answered requests (process.cpuUsage inside the child). ' +
      'Peak RSS = highest RSS of the server sampled every 25 ms during the run. ok/failed = 2xx (or gRPC OK) / anything else. ' +
      'Client CPU = the load generator’s own CPU share: near 100% means the client, not the server, was the limit.',
    '',
    ...table(
      [
        'server',
        'scenario',
        'conn.',
        'log',
        'req/s',
        'p50 ms',
        'p99 ms',
        'CPU-s/1k',
        'peak RSS MiB',
        'ok/failed',
        'client CPU',
        'load avg',
      ],
      [...run.measurements, ...(run.baselineEnd === undefined ? [] : [{ ...run.baselineEnd, server: 'baseline (end)' }])].map(rawRow),
    ),
    ...scaleSection(run),
  );

  const skipped = [
    ...run.skippedServers.map((s) => `- ${s.server}: ${s.reason}`),
    ...run.measurements
      .filter((x) => x.skipped !== undefined)
      .map((x) => `- ${x.server} ${SCENARIO_TITLES[x.scenario]} c=${x.concurrency}: ${x.skipped}`),
    ...(run.realBackends.used ? [] : [`- real backends: ${run.realBackends.reason ?? ''}`]),
  ];
  out.push('', '## Skipped', '', skipped.length === 0 ? 'Nothing.' : skipped.join('\n'));
  if (run.realBackends.fromDefaults.length > 0)
    out.push('', `Real backends: ${run.realBackends.fromDefaults.join(', ')} not set; the loopback defaults of this machine were used.`);
  out.push('', '## Method notes', '', ...METHOD_NOTES);
  out.push(
    `- One machine, ${m.nproc} cores, for everything: the server child, the load generator and, for real backends, Postgres, Redis and NATS. A server that uses one core fully leaves one core for all the rest.`,
  );
  out.push('', '## Commands', '', '```sh', ...run.commands, '```', '');
  return out.join('\n');
}
