#!/usr/bin/env node
// npm run bench [-- --quick] [--only=stdlib,koa,grpc] [--backends=fake,real] [--no-scale] [--no-login-flood] [--no-attacks] [--out=DIR] [--json=FILE]
//                 [--from-json=FILE: re-render the reports of an earlier run]
//
// Every server runs in its own child process (bench/server.ts, bench/baseline-server.ts); this process
// is only the load generator and the report writer. Ratios are taken against the bare node:http
// baseline measured in the same run, because this machine is shared and absolute numbers drift.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { grpcGeneratorName, useH2loadForGrpc } from './grpc-load.ts';
import { httpGeneratorName, useHttpGenerator, type HttpScenario } from './http-load.ts';
import { detectPinning, loadTools, pinProcess, type Pinning } from './pinning.ts';
import type { BackendName, Fixtures, ServerChildConfig, TransportName } from './ipc-protocol.ts';
import { loadAverage, machineInfo } from './machine.ts';
import { measureBareInsert, measureGrpcGet, measureH2c, measureHttp, skippedMeasurement, type RunPlan, type ServerLabel } from './measure.ts';
import type { BenchRun, Measurement, ScaleFigures, ScenarioId } from './measurement.ts';
import { dropSchemas, newSchemaName, realEnvFrom, realUnavailableReason, vacuumAnalyzeOrders, type RealEnv } from './real-env.ts';
import { renderMarkdown } from './report-markdown.ts';
import { renderSvg } from './report-svg.ts';
import { ServerChild } from './server-child.ts';
import { measureStartup } from './startup-time.ts';
import { floodMarkdown, runLoginFlood } from './login-flood.ts';
import { FIXED_CONCURRENCY, pairKey } from './targets.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TRANSPORTS: readonly TransportName[] = ['stdlib', 'koa', 'grpc'];
const TRANSPORT_FILES: Record<TransportName, string> = {
  stdlib: 'src/transports/stdlib/stdlib-transport.ts',
  koa: 'src/transports/koa/koa-transport.ts',
  grpc: 'src/transports/grpc/grpc-transport.ts',
};
/** Issue 16's list figure: p50 at offset 10,000 for a user holding 20,000 orders. */
const LIST_ORDERS = 20_000;
const LOGIN_CONCURRENCY = 3;

interface Settings {
  readonly quick: boolean;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly maxRequests: number;
  readonly loginDurationMs: number;
  readonly loginMaxRequests: number;
  readonly sweep: readonly number[];
  /** GET at 32 connections again with LOG_LEVEL=error: what request logging costs. */
  readonly logLevelVariant: boolean;
  readonly listLatency: { readonly durationMs: number; readonly maxRequests: number };
  readonly startupRuns: number;
  /** Interleaved rounds of the GET target trio (bare node:http, Fastify peer, subject); medians are reported. */
  readonly getRounds: number;
}

const FULL: Settings = {
  quick: false,
  durationMs: 6_000,
  warmupMs: 1_500,
  maxRequests: 1_000_000,
  loginDurationMs: 10_000,
  loginMaxRequests: 300,
  sweep: [1, 8, 32, 128],
  logLevelVariant: true,
  listLatency: { durationMs: 2_000, maxRequests: 2_000 },
  startupRuns: 3,
  getRounds: 3,
};

const QUICK: Settings = {
  quick: true,
  durationMs: 1_500,
  warmupMs: 400,
  maxRequests: 300_000,
  loginDurationMs: 4_000,
  loginMaxRequests: 64,
  sweep: [FIXED_CONCURRENCY],
  logLevelVariant: false,
  listLatency: { durationMs: 600, maxRequests: 300 },
  startupRuns: 2,
  getRounds: 2,
};

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

function progress(m: Measurement): void {
  const where = `${m.server} ${m.scenario} c=${m.concurrency}${m.logLevel === 'info' ? '' : ` log=${m.logLevel}`}`;
  if (m.result === undefined || m.skipped !== undefined) {
    log(`  ${where}: skipped (${m.skipped ?? 'no result'})`);
    return;
  }
  const r = m.result;
  log(
    `  ${where}: ${fmt(r.requestsPerSecond)} req/s, p50 ${fmt(r.p50Ms, 2)} ms, p99 ${fmt(r.p99Ms, 2)} ms, ` +
      `server ${fmt(m.cpuSecondsPer1k, 3)} CPU-s/1k, peak RSS ${fmt(m.peakRssBytes / 2 ** 20)} MiB` +
      `${r.failed > 0 ? `, ${r.failed} failed (${r.firstFailure ?? ''})` : ''}`,
  );
}

function scenarioRequest(port: number, fixtures: Fixtures, scenario: ScenarioId): HttpScenario {
  const base = `http://127.0.0.1:${port}`;
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
  const json = { 'content-type': 'application/json' };
  switch (scenario) {
    case 'get':
      return { method: 'GET', url: `${base}/orders/${fixtures.getOrderId}`, headers: bearer(fixtures.getToken) };
    case 'list':
    case 'list-offset-0':
      return { method: 'GET', url: `${base}/orders?limit=20${scenario === 'list' ? '' : '&offset=0'}`, headers: bearer(fixtures.listToken) };
    case 'list-offset-10000':
      return { method: 'GET', url: `${base}/orders?limit=20&offset=10000`, headers: bearer(fixtures.listToken) };
    case 'post':
      return { method: 'POST', url: `${base}/orders`, headers: { ...bearer(fixtures.postToken), ...json }, body: '{"item":"bench item","quantity":1}' };
    case 'login':
      return { method: 'POST', url: `${base}/auth/login`, headers: json, body: fixtures.loginBody };
    default:
      throw new Error(`${scenario} is not an HTTP scenario`);
  }
}

class Bench {
  readonly settings: Settings;
  readonly measurements: Measurement[] = [];
  readonly skippedServers: { server: string; reason: string }[] = [];
  readonly schemas: string[] = [];
  readonly real: RealEnv;
  readonly #children = new Set<ServerChild>();
  /** Alive for the whole run (idle costs nothing), so control runs can sit right next to each service's runs. */
  #baseline: ServerChild | undefined;
  /** The Fastify peer (bench/fastify-peer.ts), real Redis only; alive for the whole run like the baseline. */
  #peer: ServerChild | undefined;
  readonly pinning: Pinning | undefined;
  readonly h2load: boolean;

  constructor(settings: Settings, real: RealEnv, pinning: Pinning | undefined, h2load: boolean) {
    this.settings = settings;
    this.real = real;
    this.pinning = pinning;
    this.h2load = h2load;
  }

  plan(scenario: ScenarioId, concurrency: number): RunPlan {
    const s = this.settings;
    if (scenario === 'login') {
      // scrypt at production cost: ~20-40 logins/s on this machine. No warm-up run (its in-flight
      // hashes would still occupy the thread pool when the measured run starts); a longer window.
      // One load-generator address is one client of the login gate (rule LOGIN-gate): it may hold
      // 1 running + 2 queued at once on 2 cores; more would measure the gate's 429s, not logins.
      return { scenario, bounds: { concurrency: Math.min(concurrency, LOGIN_CONCURRENCY), durationMs: s.loginDurationMs, maxRequests: s.loginMaxRequests }, warmupMs: 0, warmupMaxRequests: 0 };
    }
    return { scenario, bounds: { concurrency, durationMs: s.durationMs, maxRequests: s.maxRequests }, warmupMs: s.warmupMs, warmupMaxRequests: s.maxRequests };
  }

  /** A control run next to another: half the window, a short warm-up (the server is already warm). */
  pairedPlan(scenario: ScenarioId, concurrency: number): RunPlan {
    const s = this.settings;
    return { scenario, bounds: { concurrency, durationMs: s.durationMs / 2, maxRequests: s.maxRequests }, warmupMs: 200, warmupMaxRequests: s.maxRequests };
  }

  record(m: Measurement): Measurement {
    this.measurements.push(m);
    progress(m);
    return m;
  }

  async startChild(script: string, extraEnv: NodeJS.ProcessEnv, execArgv: string[] = []): Promise<ServerChild> {
    const child = await ServerChild.start({ script: join(ROOT, script), env: { ...process.env, ...this.real, ...extraEnv }, execArgv, cwd: ROOT, pinCpu: this.pinning?.serverCpu });
    this.#children.add(child);
    return child;
  }

  async stopChild(child: ServerChild): Promise<void> {
    this.#children.delete(child);
    await child.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => this.stopChild(child).catch(() => undefined)));
  }

  readonly #baselineLabel: ServerLabel = { server: 'baseline', transport: 'node:http', backend: 'none', logLevel: 'none' };

  #baselineRequest(child: ServerChild): HttpScenario {
    return { method: 'GET', url: `http://127.0.0.1:${child.ready.port}/orders/x`, headers: {} };
  }

  async startBaseline(): Promise<void> {
    this.#baseline = await this.startChild('bench/baseline-server.ts', {});
  }

  async startPeer(): Promise<void> {
    try {
      this.#peer = await this.startChild('bench/fastify-peer.ts', {});
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.skippedServers.push({ server: PEER, reason });
      log(`${PEER}: skipped: ${reason}`);
    }
  }

  /**
   * Issue 16's GET comparison: rounds of bare node:http, the Fastify peer (real backends only) and the
   * subject, the order rotated each round so none always runs first; every run has the same window.
   * The report takes medians per server (targets.ts getTrio).
   */
  async interleavedGet(child: ServerChild, label: ServerLabel, request: HttpScenario): Promise<void> {
    const key = pairKey(label.server, 'get');
    const plan = this.pairedPlan('get', FIXED_CONCURRENCY);
    const peer = label.backend === 'real' ? this.#peer : undefined;
    const runs: (() => Promise<void>)[] = [
      () => this.pairedBaseline(key),
      ...(peer === undefined ? [] : [async () => void this.record(await measureHttp(peer, { ...PEER_LABEL, pairedFor: key }, plan, peerRequest(peer)))]),
      async () => void this.record(await measureHttp(child, { ...label, pairedFor: key }, plan, request)),
    ];
    for (let round = 0; round < this.settings.getRounds; round++) {
      for (let i = 0; i < runs.length; i++) await (runs[(i + round) % runs.length] as () => Promise<void>)();
    }
  }

  async baseline(concurrencies: readonly number[]): Promise<Measurement[]> {
    const child = this.#baseline;
    if (child === undefined) throw new Error('baseline child not started');
    const out: Measurement[] = [];
    for (const c of concurrencies) out.push(await measureHttp(child, this.#baselineLabel, this.plan('get', c), this.#baselineRequest(child)));
    return out;
  }

  async pairedBaseline(pairedFor: string): Promise<void> {
    const child = this.#baseline;
    if (child === undefined) return;
    this.record(await measureHttp(child, { ...this.#baselineLabel, pairedFor }, this.pairedPlan('get', FIXED_CONCURRENCY), this.#baselineRequest(child)));
  }

  async service(transport: TransportName, backend: BackendName): Promise<void> {
    const server = `${transport}/${backend}`;
    const schema = backend === 'real' ? newSchemaName() : undefined;
    if (schema !== undefined) this.schemas.push(schema);
    const config: ServerChildConfig = {
      transport,
      backend,
      logLevel: 'info',
      listOrders: LIST_ORDERS,
      schema,
      uniqueSuffix: schema?.replace(/^bench_/, 'bench'),
    };
    log(`${server}: starting (seeding ${LIST_ORDERS} orders through the repository port)`);
    let child: ServerChild;
    try {
      child = await this.startChild('bench/server.ts', { BENCH_SERVER_CONFIG: JSON.stringify(config) });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.skippedServers.push({ server, reason });
      log(`${server}: skipped: ${reason}`);
      return;
    }
    const fixtures = child.ready.fixtures as Fixtures;
    log(`${server}: ready on port ${child.ready.port}, seeded in ${fmt(child.ready.seedMs)} ms`);
    // The steady state autovacuum keeps the append-only table in (migration 002), reached at once.
    if (schema !== undefined) await vacuumAnalyzeOrders(this.real.POSTGRES_DSN, schema);
    const label: ServerLabel = { server, transport, backend, logLevel: 'info' };
    const http = (scenario: ScenarioId): HttpScenario => scenarioRequest(child.ready.port, fixtures, scenario);
    try {
      // The primary GET row (tables of shares), then the interleaved rounds the targets are judged on.
      this.record(await measureHttp(child, label, this.plan('get', FIXED_CONCURRENCY), http('get')));
      await this.interleavedGet(child, label, http('get'));
      if (transport === 'grpc' && this.h2load) {
        // The one-port server's REST side over HTTP/2 too: h2load, the generator issue 16 names for it.
        this.record(await measureH2c(child, label, this.plan('get-h2c', FIXED_CONCURRENCY), http('get'), this.pinning?.generatorCpu));
      }
      if (transport === 'grpc') {
        this.record(await measureGrpcGet(child, label, this.plan('grpc-get', FIXED_CONCURRENCY), fixtures.getToken, fixtures.getOrderId));
        this.record(await measureHttp(child, { ...label, pairedFor: pairKey(server, 'grpc-get') }, this.pairedPlan('get', FIXED_CONCURRENCY), http('get')));
        // Issue 18: the same GetOrder on grpc-js and Connect peers in this child, right after ours.
        for (const peer of child.ready.grpcPeers ?? []) {
          const peerLabel = { ...label, server: `${server} peer:${peer.name}`, transport: peer.name };
          this.record(await measureGrpcGet(child, peerLabel, this.plan('grpc-get', FIXED_CONCURRENCY), fixtures.getToken, fixtures.getOrderId, peer.port));
        }
      }
      for (const c of this.settings.sweep) {
        if (c !== FIXED_CONCURRENCY) this.record(await measureHttp(child, label, this.plan('get', c), http('get')));
      }
      if (this.settings.logLevelVariant) {
        await child.setLogLevel('error');
        await this.pairedBaseline(pairKey(server, 'get', 'error'));
        this.record(await measureHttp(child, { ...label, logLevel: 'error' }, this.plan('get', FIXED_CONCURRENCY), http('get')));
        await this.pairedBaseline(pairKey(server, 'get', 'error'));
        await child.setLogLevel('info');
      }
      this.record(await measureHttp(child, label, this.plan('list', FIXED_CONCURRENCY), http('list')));
      if (transport === 'stdlib') {
        // Scale figure: one caller, so the number is the query's own latency, not queueing.
        const { durationMs, maxRequests } = this.settings.listLatency;
        for (const scenario of ['list-offset-0', 'list-offset-10000'] as const) {
          const plan: RunPlan = { scenario, bounds: { concurrency: 1, durationMs, maxRequests }, warmupMs: 200, warmupMaxRequests: 50 };
          this.record(await measureHttp(child, label, plan, http(scenario)));
        }
      }
      const bare = { ...label, logLevel: 'none' };
      if (backend === 'real') this.record(await measureBareInsert(child, bare, this.plan('bare-insert', FIXED_CONCURRENCY)));
      this.record(await measureHttp(child, label, this.plan('post', FIXED_CONCURRENCY), http('post')));
      if (backend === 'real') {
        this.record(await measureBareInsert(child, { ...bare, pairedFor: pairKey(server, 'post') }, this.pairedPlan('bare-insert', FIXED_CONCURRENCY)));
      }
      this.record(await measureHttp(child, label, this.plan('login', FIXED_CONCURRENCY), http('login')));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.record(skippedMeasurement(label, this.plan('get', FIXED_CONCURRENCY), `server failed mid-run: ${reason} ${child.stderrTail()}`));
    } finally {
      await this.stopChild(child);
    }
  }
}

const PEER = 'fastify-peer';
const PEER_LABEL: ServerLabel = { server: PEER, transport: 'fastify', backend: 'real', logLevel: 'info' };

function peerRequest(peer: ServerChild): HttpScenario {
  const fixtures = peer.ready.fixtures as Fixtures;
  return { method: 'GET', url: `http://127.0.0.1:${peer.ready.port}/orders/${fixtures.getOrderId}`, headers: { authorization: `Bearer ${fixtures.getToken}` } };
}

/**
 * wrk and h2load come from Debian (wrk, nghttp2-client). The bench is not part of CI: as root with
 * apt-get it installs them once; otherwise it falls back to autocannon and the report says so.
 */
function loadGenerators(): { wrk: boolean; h2load: boolean; note: string | undefined } {
  let tools = loadTools();
  if ((!tools.wrk || !tools.h2load) && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    log('bench: wrk not found; apt-get install -y wrk nghttp2-client');
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'wrk', 'nghttp2-client'], { stdio: 'ignore', timeout: 180_000 });
    tools = loadTools();
  }
  const missing = [
    ...(tools.wrk ? [] : ['wrk is not installed (Debian package wrk): HTTP/1.1 runs used autocannon in the orchestrator, a slower generator']),
    ...(tools.h2load ? [] : ['h2load is not installed (Debian package nghttp2-client): the one-port server’s REST side over h2c was not measured']),
  ];
  return { wrk: tools.wrk, h2load: tools.h2load, note: missing.length === 0 ? undefined : missing.join('; ') };
}

async function sessionHeap(): Promise<ScaleFigures['sessions']> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(ROOT, 'bench/session-heap.ts')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(`exit ${code}: ${err.trim().slice(-300)}`);
        resolve(JSON.parse(out) as ScaleFigures['sessions']);
      } catch (error) {
        resolve({ error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
}

async function startupFigures(settings: Settings, bench: Bench, realReason: string | undefined): Promise<ScaleFigures['startup']> {
  const figures: ScaleFigures['startup'] = [];
  for (const mode of ['embedded', 'real'] as const) {
    if (mode === 'real' && realReason !== undefined) {
      figures.push({ mode, runsMs: [], error: `real backends: ${realReason}` });
      continue;
    }
    const runsMs: number[] = [];
    let error: string | undefined;
    for (let i = 0; i < settings.startupRuns && error === undefined; i++) {
      const schema = mode === 'real' ? newSchemaName() : undefined;
      if (schema !== undefined) bench.schemas.push(schema);
      const result = await measureStartup(ROOT, mode === 'embedded', mode === 'real' ? { ...bench.real, POSTGRES_SCHEMA: schema } : {});
      if (result.readyMs === undefined) error = result.error;
      else runsMs.push(result.readyMs);
    }
    log(`  start-up ${mode}: ${runsMs.map((ms) => `${fmt(ms)} ms`).join(', ')}${error === undefined ? '' : ` (${error})`}`);
    figures.push({ mode, runsMs, error });
  }
  return figures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      backends: { type: 'string', default: 'fake,real' },
      'no-scale': { type: 'boolean', default: false },
      'no-login-flood': { type: 'boolean', default: false },
      'no-attacks': { type: 'boolean', default: false },
      out: { type: 'string', default: join(ROOT, 'reports') },
      json: { type: 'string' },
      /** Re-render reports from a --json file of an earlier run, without measuring anything. */
      'from-json': { type: 'string' },
    },
  });
  if (values['from-json'] !== undefined) {
    const run = JSON.parse(await readFile(values['from-json'], 'utf8')) as BenchRun;
    const outDir = values.out ?? join(ROOT, 'reports');
    await mkdir(outDir, { recursive: true });
    await writeFile(join(outDir, 'bench.md'), renderMarkdown(run));
    await writeFile(join(outDir, 'bench.svg'), renderSvg(run));
    log(`bench: re-rendered ${join(outDir, 'bench.md')} and bench.svg from ${values['from-json']}`);
    return;
  }
  const settings = values.quick ? QUICK : FULL;
  const only = values.only === undefined ? TRANSPORTS : (values.only.split(',') as TransportName[]);
  const backends = (values.backends ?? 'fake,real').split(',') as BackendName[];
  const wallStart = performance.now();
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  const loadAverageStart = loadAverage();
  log(`bench: ${settings.quick ? 'quick' : 'full'} run on ${machine.nproc} × ${machine.cpuModel}, Node ${machine.node}, load average ${fmt(loadAverageStart, 2)}`);

  const { env: real, fromDefaults } = realEnvFrom(process.env);
  const realReason = backends.includes('real') ? await realUnavailableReason(real) : 'not requested (--backends)';
  if (realReason !== undefined) log(`bench: real backends skipped: ${realReason}`);
  const pinning = detectPinning();
  // The orchestrator (the gRPC loop, autocannon when wrk is absent) sits on the generator's core too.
  if (pinning !== undefined) pinProcess(process.pid, pinning.generatorCpu);
  const generators = loadGenerators();
  useHttpGenerator(generators.wrk ? 'wrk' : 'autocannon', pinning?.generatorCpu);
  if (generators.h2load) useH2loadForGrpc(pinning?.generatorCpu);
  const method = {
    httpGenerator: httpGeneratorName(),
    grpcGenerator: grpcGeneratorName(),
    pinning: pinning === undefined ? 'not pinned (needs taskset and 2 CPUs)' : `server children on CPU ${pinning.serverCpu}, load generators on CPU ${pinning.generatorCpu} (taskset)`,
    notes: generators.note === undefined ? [] : [generators.note],
  };
  log(`bench: HTTP load by ${method.httpGenerator}; ${method.pinning}`);
  const bench = new Bench(settings, real, pinning, generators.h2load);

  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('bench: interrupted; stopping the server child and dropping bench schemas');
    void (async () => {
      await bench.stopAll();
      if (realReason === undefined) await dropSchemas(real.POSTGRES_DSN, bench.schemas).catch(() => undefined);
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let baselineEnd: Measurement | undefined;
  let scale: ScaleFigures = { sessions: { error: 'not measured (--no-scale)' }, startup: [] };
  try {
    log('baseline: bare node:http, same Order JSON, no I/O');
    await bench.startBaseline();
    if (realReason === undefined) await bench.startPeer();
    for (const m of await bench.baseline(settings.sweep)) bench.record(m);

    for (const transport of TRANSPORTS) {
      if (!only.includes(transport)) continue;
      if (!existsSync(join(ROOT, TRANSPORT_FILES[transport]))) {
        bench.skippedServers.push({ server: transport, reason: `${TRANSPORT_FILES[transport]} is not present` });
        log(`${transport}: skipped: ${TRANSPORT_FILES[transport]} is not present`);
        continue;
      }
      for (const backend of backends) {
        if (backend === 'real' && realReason !== undefined) {
          bench.skippedServers.push({ server: `${transport}/real`, reason: realReason });
          continue;
        }
        await bench.service(transport, backend);
      }
    }

    if (!settings.quick) {
      log('baseline again (drift over the run)');
      baselineEnd = (await bench.baseline([FIXED_CONCURRENCY]))[0];
      if (baselineEnd !== undefined) progress(baselineEnd);
    }
    await bench.stopAll();
    // What follows spawns processes measured on their own (start-up, session heap, attacks, login flood):
    // they inherit this process's CPUs, so it gives the generator's core back first.
    if (pinning !== undefined) pinProcess(process.pid, `0-${availableParallelism() - 1}`);

    if (!values['no-scale']) {
      log('scale figures');
      const sessions = await sessionHeap();
      log(`  sessions: ${JSON.stringify(sessions)}`);
      scale = { sessions, startup: await startupFigures(settings, bench, realReason) };
    }
  } finally {
    await bench.stopAll();
    if (realReason === undefined) {
      await dropSchemas(real.POSTGRES_DSN, bench.schemas).catch((error: unknown) => log(`bench: dropping schemas failed: ${String(error)}`));
    }
  }

  const run: BenchRun = {
    quick: settings.quick,
    startedAt,
    wallSeconds: (performance.now() - wallStart) / 1000,
    machine,
    loadAverageStart,
    settings: {
      durationMs: settings.durationMs,
      warmupMs: settings.warmupMs,
      maxRequests: settings.maxRequests,
      loginDurationMs: settings.loginDurationMs,
      loginMaxRequests: settings.loginMaxRequests,
      sweep: [...settings.sweep],
    },
    measurements: bench.measurements,
    baselineEnd,
    skippedServers: bench.skippedServers,
    realBackends: { used: realReason === undefined, reason: realReason, fromDefaults },
    scale,
    method,
    commands: [
      `# this report: npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      'npm run bench -- --quick            # < 3 min, indicative',
      'npm run bench                       # full, < 15 min',
      'node bench/profile.ts               # --cpu-prof of a GET-only run, top self-time functions',
      'node bench/ab.ts --a /tmp/bench-base --b /tmp/bench-scratch   # patch before/after, interleaved',
    ],
  };
  const outDir = values.out ?? join(ROOT, 'reports');
  await mkdir(outDir, { recursive: true });
  // Issue 18: the attacks on the one-port listener, black-box on a spawned orders-grpc --embedded.
  const attacks = values['no-attacks'] === true ? '' : await runGrpcAttacks(settings.quick, log);
  await writeFile(join(outDir, 'bench.md'), renderMarkdown(run) + attacks);
  await writeFile(join(outDir, 'bench.svg'), renderSvg(run));
  if (values.json !== undefined) await writeFile(values.json, `${JSON.stringify(run, null, 2)}\n`);
  // Issue 12: the login gate under a flood, each executable in its own process (bench/login-flood.ts).
  if (values['no-login-flood'] !== true) {
    await writeFile(join(outDir, 'login-flood.md'), floodMarkdown(await runLoginFlood({ quick: settings.quick, only, log })));
  }
  log(`bench: wrote ${relative(process.cwd(), join(outDir, 'bench.md'))} and bench.svg in ${fmt(run.wallSeconds)} s`);
}

/**
 * bench/grpc-peers/attacks.ts in its own process (it spawns the executable itself); its lines become a
 * section of the report. Timings here are what the conformance cases may not assert.
 */
async function runGrpcAttacks(quick: boolean, say: (line: string) => void): Promise<string> {
  const resetSeconds = quick ? 5 : 20;
  say(`bench: gRPC attacks (rapid reset ${resetSeconds} s, gzip bombs, trickling streams)`);
  const lines = await new Promise<string[]>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/grpc-peers/attacks.ts'), '--reset-seconds', String(resetSeconds)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', () => resolve(out.split('\n').filter((line) => line.trim() !== '')));
  });
  return [
    '',
    '## gRPC attacks on the one-port listener (issue 18)',
    '',
    `\`node bench/grpc-peers/attacks.ts --reset-seconds ${resetSeconds}\` against \`orders-grpc --embedded\` (its own process; loopback, bounded):`,
    '',
    '```',
    ...lines,
    '```',
    '',
  ].join('\n');
}

await main();
