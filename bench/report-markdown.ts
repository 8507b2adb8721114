import { renderGrpcPeers } from './grpc-peers/report.ts';
import { SCENARIO_TITLES, type BenchRun, type Measurement, type ScenarioId } from './measurement.ts';
import { median } from './percentiles.ts';
import { baselineRps, find, FIXED_CONCURRENCY, getTrio, judgeTargets, PEER_SERVER, rps } from './targets.ts';

const RATIO_SCENARIOS: readonly ScenarioId[] = ['get', 'get-h2c', 'list', 'post', 'login', 'grpc-get'];

function n(value: number, digits = 0): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

function ratio(value: number, base: number): string {
  const r = value / base;
  if (!Number.isFinite(r)) return '–';
  return `${(r * 100).toFixed(r < 0.01 ? 2 : 0)}%`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function servers(run: BenchRun): string[] {
  return [...new Set(run.measurements.map((m) => m.server).filter((s) => s !== 'baseline' && s !== PEER_SERVER))];
}

/** Issue 16: each HTTP transport against the Fastify peer and bare node:http, medians of the interleaved rounds. */
function peerSection(run: BenchRun): string[] {
  const rows = servers(run)
    .filter((server) => !server.includes(' peer:'))
    .map((server) => ({ server, trio: getTrio(run, server) }))
    .filter(({ trio }) => trio.rounds > 0);
  if (rows.length === 0) return [];
  const x = (a: number, b: number | undefined): string => (b !== undefined && Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '–');
  return [
    '',
    '## GET /orders/{id} (cache hit): this service ÷ the Fastify peer ÷ bare node:http',
    '',
    `Rounds of bare node:http, the Fastify peer (bench/fastify-peer.ts: Fastify 5 + @fastify/jwt + ioredis + pino + prom-client, the same work; real Redis only) and the subject, ` +
      `the order rotated each round, ${FIXED_CONCURRENCY} connections, each run ${run.settings.durationMs / 2} ms after a short warm-up; medians per server. ` +
      'CPU µs/request = the server process’s own CPU (process.cpuUsage) ÷ the requests it answered.',
    '',
    table(
      ['server', 'rounds', 'CPU µs/req', 'peer µs/req', 'bare µs/req', '÷ peer (CPU)', '÷ bare (CPU)', 'req/s', 'peer req/s', 'bare req/s', 'p99 ms', 'peer p99 ms'],
      rows.map(({ server, trio }) => [
        server,
        String(trio.rounds),
        n(trio.subject.cpuUs),
        n(trio.peer?.cpuUs ?? Number.NaN),
        n(trio.bare.cpuUs),
        x(trio.subject.cpuUs, trio.peer?.cpuUs),
        x(trio.subject.cpuUs, trio.bare.cpuUs),
        n(trio.subject.rps),
        n(trio.peer?.rps ?? Number.NaN),
        n(trio.bare.rps),
        n(trio.subject.p99Ms, 2),
        n(trio.peer?.p99Ms ?? Number.NaN, 2),
      ]),
    ),
  ];
}

function rawRow(m: Measurement): string[] {
  const r = m.result;
  return [
    m.pairedFor === undefined ? m.server : `${m.server} (control for ${m.pairedFor})`,
    SCENARIO_TITLES[m.scenario],
    String(m.concurrency),
    m.logLevel,
    r === undefined ? `skipped: ${m.skipped ?? ''}` : n(r.requestsPerSecond),
    r === undefined ? '' : n(r.p50Ms, 2),
    r === undefined ? '' : n(r.p99Ms, 2),
    n(m.cpuSecondsPer1k, 3),
    n(m.peakRssBytes / 2 ** 20),
    r === undefined ? '' : `${r.ok}/${r.failed}`,
    r === undefined ? '' : `${n((r.clientCpuSeconds / r.elapsedSeconds) * 100)}%`,
    n(m.loadAverage, 2),
  ];
}

export function renderMarkdown(run: BenchRun): string {
  const out: string[] = [];
  const m = run.machine;
  const base32 = baselineRps(run, FIXED_CONCURRENCY);
  out.push('# Benchmark report');
  out.push('');
  out.push(
    `${run.quick ? 'Quick run (`--quick`: short runs, 32 connections only; indicative, not for decisions)' : 'Full run'}, ` +
      `${run.startedAt}, ${n(run.wallSeconds)} s wall. Machine: ${m.nproc} × ${m.cpuModel} (nproc ${m.nproc}), ${m.memoryGiB} GiB, ` +
      `${m.platform}, Node ${m.node}. Load average at start ${n(run.loadAverageStart, 2)} (this machine is shared; see the last column of the raw table).`,
  );
  out.push('');
  out.push(
    `Each run: ${run.settings.warmupMs} ms warm-up (dropped), then ${run.settings.durationMs} ms or ${run.settings.maxRequests.toLocaleString('en')} requests ` +
      `(login: no warm-up, ${run.settings.loginDurationMs} ms or ${run.settings.loginMaxRequests}), whichever comes first. Every server is its own child process. ` +
      `HTTP/1.1 keep-alive load: ${run.method?.httpGenerator ?? 'autocannon 9 (in the orchestrator)'}; gRPC: ${run.method?.grpcGenerator ?? 'a @grpc/grpc-js closed loop on one channel in the orchestrator'} (a few grpc-js calls first must all succeed: h2load sees only HTTP statuses). ` +
      `Placement: ${run.method?.pinning ?? 'not pinned'}. Loopback only.`,
  );
  for (const note of run.method?.notes ?? []) out.push('', `Note: ${note}.`);
  if (run.baselineEnd?.result !== undefined) {
    const end = run.baselineEnd.result.requestsPerSecond;
    out.push('');
    out.push(`Noise: the baseline at 32 connections gave ${n(base32)} req/s at the start and ${n(end)} req/s at the end (${ratio(end, base32)} of the start).`);
  }

  const baseRow = find(run, 'baseline', 'get');
  if (baseRow?.result !== undefined) {
    const clientShare = baseRow.result.clientCpuSeconds / baseRow.result.elapsedSeconds;
    if (clientShare > 0.8) {
      out.push('');
      out.push(
        `The load generator used ${n(clientShare * 100)}% of a core during the baseline run at ${FIXED_CONCURRENCY} connections: the baseline figure is partly the ` +
          'generator’s own ceiling, so the true server ceiling is higher and the shares below are, if anything, flattering. The server CPU per request ' +
          'table does not depend on the generator.',
      );
    }
  }

  out.push('', '## Targets', '');
  out.push(
    table(
      ['target', 'subject', 'measured', 'status'],
      judgeTargets(run).map((t) => [t.target, t.subject, t.measured, t.met === undefined ? 'not measured' : t.met ? '**met**' : '**not met**']),
    ),
  );

  out.push(...peerSection(run));
  out.push(...renderGrpcPeers(run));

  out.push('', `## Throughput as a share of the baseline (${FIXED_CONCURRENCY} connections, same run)`, '');
  out.push(
    `Baseline: bare node:http answering the same Order JSON with no routing, auth, I/O or logging: ${n(base32)} req/s at ${FIXED_CONCURRENCY} connections. ` +
      'gRPC GetOrder is also divided by the HTTP baseline here; its target compares it with the REST GET of the same process (above).',
  );
  out.push('');
  out.push(
    table(
      ['server', ...RATIO_SCENARIOS.map((s) => SCENARIO_TITLES[s])],
      servers(run).map((server) => [server, ...RATIO_SCENARIOS.map((s) => ratio(rps(find(run, server, s)), base32))]),
    ),
  );
  const baseCpu = find(run, 'baseline', 'get')?.cpuSecondsPer1k ?? Number.NaN;
  out.push('', '### Server CPU per request, as a multiple of the baseline’s', '');
  out.push(
    `Not limited by the load generator (which shares this ${m.nproc}-core machine with the server and, for real backends, with Postgres, Redis and NATS): ` +
      `the baseline spends ${n(baseCpu * 1000, 0)} µs of CPU per request.`,
  );
  out.push('');
  out.push(
    table(
      ['server', ...RATIO_SCENARIOS.map((s) => SCENARIO_TITLES[s])],
      servers(run).map((server) => [
        server,
        ...RATIO_SCENARIOS.map((s) => {
          const cost = find(run, server, s)?.cpuSecondsPer1k ?? Number.NaN;
          return Number.isFinite(cost / baseCpu) ? `${(cost / baseCpu).toFixed(1)}×` : '–';
        }),
      ]),
    ),
  );
  const sweep = run.settings.sweep;
  if (sweep.length > 1) {
    out.push('', '### GET /orders/{id} by concurrency, as a share of the baseline at the same concurrency', '');
    out.push(
      table(
        ['server', ...sweep.map((c) => `${c} conn.`)],
        [
          ['baseline (req/s)', ...sweep.map((c) => n(baselineRps(run, c)))],
          ...servers(run).map((server) => [server, ...sweep.map((c) => ratio(rps(find(run, server, 'get', c)), baselineRps(run, c)))]),
        ],
      ),
    );
  }

  out.push('', '## Raw figures', '');
  out.push(
    'CPU-s/1k = CPU-seconds the server process spent per 1,000 answered requests (process.cpuUsage inside the child). ' +
      'Peak RSS = highest RSS of the server sampled every 25 ms during the run. ok/failed = 2xx (or gRPC OK) / anything else. ' +
      'Client CPU = the load generator’s own CPU share: near 100% means the client, not the server, was the limit.',
  );
  out.push('');
  out.push(
    table(
      ['server', 'scenario', 'conn.', 'log', 'req/s', 'p50 ms', 'p99 ms', 'CPU-s/1k', 'peak RSS MiB', 'ok/failed', 'client CPU', 'load avg'],
      [...run.measurements, ...(run.baselineEnd === undefined ? [] : [{ ...run.baselineEnd, server: 'baseline (end)' }])].map(rawRow),
    ),
  );

  out.push('', '## Scale figures', '');
  const sessions = run.scale.sessions;
  if ('error' in sessions) {
    out.push(`Sessions: ${sessions.error}`);
  } else {
    out.push(
      `Sessions: heapUsed after minus before creating ${sessions.cap.toLocaleString('en')} sessions on a fresh SessionScope, each with ${sessions.recent} recent ids ` +
        '(flat 36-character strings, as parsed from requests), after forced GC (`--expose-gc`).',
    );
    out.push('');
    out.push(
      table(
        ['state', 'heap total', 'bytes / session', 'acquire beyond the cap refused'],
        [
          ['lingering (released, linger timer armed)', `${(sessions.lingering.totalBytes / 1e6).toFixed(1)} MB`, n(sessions.lingering.bytesPerSession), String(sessions.lingering.capRefused)],
          ['held (not released, own AbortController)', `${(sessions.held.totalBytes / 1e6).toFixed(1)} MB`, n(sessions.held.bytesPerSession), String(sessions.held.capRefused)],
        ],
      ),
    );
  }
  out.push('');
  const listRows = run.measurements.filter((x) => x.scenario === 'list-offset-0' || x.scenario === 'list-offset-10000');
  out.push('List latency for a user holding 20,000 orders, one connection (stdlib transport; real Postgres vacuumed and analysed after seeding):');
  out.push('');
  out.push(
    table(
      ['server', 'query', 'p50 ms', 'p99 ms', 'req/s'],
      listRows.map((x) => [x.server, SCENARIO_TITLES[x.scenario], n(x.result?.p50Ms ?? Number.NaN, 2), n(x.result?.p99Ms ?? Number.NaN, 2), n(rps(x))]),
    ),
  );
  for (const server of [...new Set(listRows.map((x) => x.server))]) {
    const at0 = listRows.find((x) => x.server === server && x.scenario === 'list-offset-0')?.result?.p50Ms ?? Number.NaN;
    const deep = listRows.find((x) => x.server === server && x.scenario === 'list-offset-10000')?.result?.p50Ms ?? Number.NaN;
    if (Number.isFinite(deep / at0)) {
      out.push('', `${server}: offset 10,000 takes ${n(deep / at0, 1)}× the p50 of offset 0${deep / at0 > 3 ? ' (OFFSET walks and discards the skipped index entries; keyset paging would not, but spec 4.1 fixes limit/offset)' : ''}.`);
    }
  }
  out.push('');
  out.push('Start-up: spawn `node bin/orders-stdlib.ts [--embedded]` → first 200 from the admin `/readyz` (includes Node start-up and type stripping).');
  out.push('');
  out.push(
    table(
      ['mode', 'runs (ms)', 'median ms', 'note'],
      run.scale.startup.map((s) => [s.mode, s.runsMs.map((x) => n(x)).join(', '), n(median(s.runsMs)), s.error ?? '']),
    ),
  );

  out.push('', '## Skipped', '');
  const skipped = [
    ...run.skippedServers.map((s) => `- ${s.server}: ${s.reason}`),
    ...run.measurements.filter((x) => x.skipped !== undefined).map((x) => `- ${x.server} ${SCENARIO_TITLES[x.scenario]} c=${x.concurrency}: ${x.skipped}`),
  ];
  if (!run.realBackends.used) skipped.push(`- real backends: ${run.realBackends.reason ?? ''}`);
  out.push(skipped.length === 0 ? 'Nothing.' : skipped.join('\n'));
  if (run.realBackends.fromDefaults.length > 0) {
    out.push('', `Real backends: ${run.realBackends.fromDefaults.join(', ')} not set; the loopback defaults of this machine were used.`);
  }

  out.push('', '## Method notes', '');
  out.push(
    [
      '- Measured and not applied: ioredis `enableAutoPipelining` (GET and POST unchanged): each HTTP request is parsed in its own tick, so at 32 connections nothing coalesces.',
      '- GET /orders/{id} cache hit: this service keeps a bounded in-process tier in front of Redis (rule SVC-near-cache: 10,000 orders, 30 s each, Redis still written on create and read on a near miss), so after the first read of the bench order its hits do not reach Redis; the Fastify peer reads Redis on every request, as a typical cache-aside implementation does. Issue 16 allows the near tier; the peer was written without one, as a typical team would.',
      '- Placement: each server child is pinned with `taskset -a` (all its threads) to one CPU and wrk/h2load (and the orchestrator, which runs the gRPC loop) to the other; Postgres, Redis, NATS and whatever else runs on this shared machine are not pinned and land on both.',
      '- wrk counts answers outside 2xx/3xx as failed; its latency histogram has 1 µs resolution. wrk and h2load are bounded by time (-d / -D), killed by the bench if they overrun.',
      '- Servers are started exactly as the executables start them (startService), LOG_LEVEL=info (request logging is part of the product; the JSON lines go to /dev/null), RATE_LIMIT_RPS=1e9 (the limiter runs but never refuses). One GET row per real server is repeated with LOG_LEVEL=error.',
      '- Real backends: own schema `bench_<random>` (dropped by the child on stop, and again by the orchestrator), own Redis key prefix and NATS subject. Seeding goes through the repository port in the child and is not measured.',
      '- GET uses one user and one cached order (one session); POST one user; login one user with the production scrypt cost (N=16384), so login measures the hash.',
      '- The bare INSERT runs inside the server child, on the service’s own pg Pool (10 connections), with 32 concurrent callers: the same statement the repository issues, without HTTP, auth, Redis or NATS.',
      '- Ratios for the targets are taken side by side: the GET targets on the medians of interleaved rounds (bare node:http, Fastify peer, subject), the REST GET again right after gRPC GetOrder, the bare INSERT before and after POST (the mean of the two is the denominator). The tables of shares use the baseline measured at the start.',
      `- One machine, ${m.nproc} cores, for everything: the server child, the load generator and, for real backends, Postgres, Redis and NATS. A server that uses one core fully leaves one core for all the rest.`,
      '- Latency percentiles: wrk’s own histogram (µs resolution); with autocannon, each response’s own float timing rather than its 1 ms histogram.',
    ].join('\n'),
  );


  out.push('', '## Commands', '');
  out.push(['```sh', ...run.commands, '```'].join('\n'));
  out.push('');
  return out.join('\n');
}
