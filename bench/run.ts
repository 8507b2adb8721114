#!/usr/bin/env node
// npm run bench [-- --quick] [--speed=on|off] [--only=stdlib,koa,grpc] [--backends=fake,real] [--no-scale] [--no-login-flood] [--no-attacks] [--out=DIR] [--json=FILE]
//
// Every server runs in its own child process (bench/server.ts, bench/baseline-server.ts,
// bench/fastify-peer.ts); this process is only the orchestrator and the report writer. Ratios are taken
// against the bare node:http baseline measured in the same run, because this machine is shared and
// absolute numbers drift.
import { mkdir, writeFile } from 'node:fs/promises';
import { execFile, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { ServerChild, serverChildConfig, type BackendName, type TransportName } from './child.ts';
import { pinGenerators } from './load.ts';
import { runLoginFlood } from './login-flood.ts';
import { detectPinning, hasTool, loadAverage, machineInfo, pinProcess, type Pinning } from './machine.ts';
import { measure, type BenchRun, type Measurement, type RunPlan, type ScaleFigures, type ScenarioId, type ServerLabel } from './measure.ts';
import { dropSchemas, newSchemaName, realEnvFrom, realUnavailableReason, vacuumAnalyzeOrders, type RealEnv } from './real-env.ts';
import { FIXED_CONCURRENCY, pairKey, PEER_SERVER, rawRow, renderMarkdown } from './report.ts';
import { renderSvg } from './report-svg.ts';
import type { SessionHeap } from './session-heap.ts';
import { measureStartup } from './startup-time.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TRANSPORTS: readonly TransportName[] = ['stdlib', 'koa', 'grpc'];
/** The list figure: p50 at offset 10,000 for a user holding 20,000 orders. */
const LIST_ORDERS = 20_000;
/**
 * scrypt at production cost: ~20-40 logins/s on this machine. One load-generator address is one
 * client of the login gate (rule LOGIN-gate): it may hold 1 running + 2 queued at once on 2 cores;
 * more would measure the gate's 429s, not logins.
 */
const LOGIN_CONCURRENCY = 3;

/** A full run, or a quick one (short runs, 32 connections only; indicative). */
function settingsFor(quick: boolean) {
  return {
    quick,
    durationMs: quick ? 1_500 : 6_000,
    warmupMs: quick ? 400 : 1_500,
    loginDurationMs: quick ? 4_000 : 10_000,
    sweep: quick ? [FIXED_CONCURRENCY] : [1, 8, 32, 128],
    /** GET at 32 connections again with LOG_LEVEL=error: what request logging costs. */
    logLevelVariant: !quick,
    /** The list at offsets 0 and 10,000 over one connection. */
    listLatencyMs: quick ? 1_000 : 2_000,
    startupRuns: quick ? 2 : 3,
    /** Interleaved rounds of the GET targets (bare node:http, Fastify peer, orders-stdlib for the other transports, subject); medians are reported. */
    getRounds: quick ? 2 : 5,
    /** POST runs on real backends, each followed by a bare INSERT run (one more before the first); medians are judged. */
    postRounds: quick ? 1 : 3,
  };
}
type Settings = ReturnType<typeof settingsFor>;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

const BASELINE: ServerLabel = { server: 'baseline', logLevel: 'none' };
const PEER: ServerLabel = { server: PEER_SERVER, logLevel: 'info' };

class Bench {
  readonly measurements: Measurement[] = [];
  readonly skippedServers: { server: string; reason: string }[] = [];
  readonly schemas: string[] = [];
  readonly #children = new Set<ServerChild>();
  /** Alive for the whole run (idle costs nothing), so control runs can sit right next to each service's runs. */
  #baseline: ServerChild | undefined;
  /** The Fastify peer (bench/fastify-peer.ts), real Redis only; alive for the whole run like the baseline. */
  #peer: ServerChild | undefined;
  /**
   * orders-stdlib on real backends, kept alive after its own runs: the Koa and one-port GET rounds run it
   * beside them, so their ≤ 1.2 × stdlib targets compare runs minutes apart no more (this machine's
   * throughput drifted by up to 2× between phases).
   */
  #stdlibControl: { child: ServerChild; label: ServerLabel } | undefined;

  readonly settings: Settings;
  readonly real: RealEnv;
  readonly pinning: Pinning | undefined;

  constructor(settings: Settings, real: RealEnv, pinning: Pinning | undefined) {
    this.settings = settings;
    this.real = real;
    this.pinning = pinning;
  }

  plan(scenario: ScenarioId, concurrency = FIXED_CONCURRENCY): RunPlan {
    const s = this.settings;
    // Login: no warm-up run (its in-flight hashes would still occupy the thread pool when the measured run starts), a longer window.
    if (scenario === 'login')
      return { scenario, concurrency: Math.min(concurrency, LOGIN_CONCURRENCY), durationMs: s.loginDurationMs, warmupMs: 0 };
    return { scenario, concurrency, durationMs: s.durationMs, warmupMs: s.warmupMs };
  }

  /** A control run next to another: half the window, a short warm-up (the server is already warm). */
  pairedPlan(scenario: ScenarioId): RunPlan {
    return { scenario, concurrency: FIXED_CONCURRENCY, durationMs: this.settings.durationMs / 2, warmupMs: 200 };
  }

  async run(child: ServerChild, label: ServerLabel, plan: RunPlan, port?: number): Promise<Measurement> {
    const m = await measure(child, label, plan, port);
    this.measurements.push(m);
    log(`  ${rawRow(m).join(' | ')}`);
    return m;
  }

  /** A child that does not start is a skipped server, not a failed run. */
  async start(server: string, script: string, env: NodeJS.ProcessEnv = {}): Promise<ServerChild | undefined> {
    try {
      const child = await ServerChild.start({
        script: join(ROOT, script),
        env: { ...process.env, ...this.real, ...env },
        cwd: ROOT,
        pinCpu: this.pinning?.serverCpu,
      });
      this.#children.add(child);
      return child;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.skippedServers.push({ server, reason });
      log(`${server}: skipped: ${reason}`);
      return undefined;
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => child.stop().catch(() => undefined)));
    this.#children.clear();
  }

  async startControls(withPeer: boolean): Promise<void> {
    this.#baseline = await this.start('baseline', 'bench/baseline-server.ts');
    if (withPeer) this.#peer = await this.start(PEER_SERVER, 'bench/fastify-peer.ts');
  }

  async baseline(concurrency: number, plan = this.plan('get', concurrency), label = BASELINE): Promise<Measurement | undefined> {
    const child = this.#baseline;
    return child === undefined ? undefined : this.run(child, label, plan);
  }

  pairedBaseline(pairedFor: string): Promise<Measurement | undefined> {
    return this.baseline(FIXED_CONCURRENCY, this.pairedPlan('get'), { ...BASELINE, pairedFor });
  }

  /**
   * The GET comparison: rounds of bare node:http, the Fastify peer (real backends only) and the
   * subject, the order rotated each round so none always runs first; every run has the same window.
   * The report takes medians per server (report.ts getTrio).
   */
  async interleavedGet(child: ServerChild, label: ServerLabel, real: boolean): Promise<void> {
    const key = pairKey(label.server, 'get');
    const peer = real ? this.#peer : undefined;
    const stdlib = real && label.server !== this.#stdlibControl?.label.server ? this.#stdlibControl : undefined;
    const runs: (() => Promise<unknown>)[] = [
      () => this.pairedBaseline(key),
      ...(peer === undefined ? [] : [() => this.run(peer, { ...PEER, pairedFor: key }, this.pairedPlan('get'))]),
      ...(stdlib === undefined ? [] : [() => this.run(stdlib.child, { ...stdlib.label, pairedFor: key }, this.pairedPlan('get'))]),
      () => this.run(child, { ...label, pairedFor: key }, this.pairedPlan('get')),
    ];
    for (let round = 0; round < this.settings.getRounds; round++) {
      for (let i = 0; i < runs.length; i++) await (runs[(i + round) % runs.length] as () => Promise<unknown>)();
    }
  }

  async service(transport: TransportName, backend: BackendName): Promise<void> {
    const server = `${transport}/${backend}`;
    const config = serverChildConfig(transport, backend, 'info', LIST_ORDERS);
    if (config.schema !== undefined) this.schemas.push(config.schema);
    log(`${server}: starting (seeding ${LIST_ORDERS} orders through the repository port)`);
    const child = await this.start(server, 'bench/server.ts', { BENCH_SERVER_CONFIG: JSON.stringify(config) });
    if (child === undefined) return;
    log(`${server}: ready on port ${child.ready.port}, seeded in ${child.ready.seedMs.toFixed(0)} ms`);
    // The steady state autovacuum keeps the append-only table in (migration 002), reached at once.
    if (config.schema !== undefined) await vacuumAnalyzeOrders(this.real.POSTGRES_DSN, config.schema);
    const label: ServerLabel = { server, logLevel: 'info' };
    // A child that dies mid-run leaves skipped rows (measure), each with the tail of its stderr.
    try {
      // The primary GET row (tables of shares), then the interleaved rounds the targets are judged on.
      await this.run(child, label, this.plan('get'));
      await this.interleavedGet(child, label, backend === 'real');
      if (transport === 'grpc') {
        // The one-port server's REST side over HTTP/2 too: h2load.
        await this.run(child, label, this.plan('get-h2c'));
        await this.run(child, label, this.plan('grpc-get'));
        await this.run(child, { ...label, pairedFor: pairKey(server, 'grpc-get') }, this.pairedPlan('get'));
        // The same GetOrder on grpc-js and Connect peers in this child, right after ours.
        for (const peer of child.ready.grpcPeers ?? [])
          await this.run(child, { ...label, server: `${server} peer:${peer.name}` }, this.plan('grpc-get'), peer.port);
      }
      for (const c of this.settings.sweep.filter((c) => c !== FIXED_CONCURRENCY)) await this.run(child, label, this.plan('get', c));
      // A child that no longer answers skips the variant (its runs would be skipped rows anyway).
      if (
        this.settings.logLevelVariant &&
        (await child.setLogLevel('error').then(
          () => true,
          () => false,
        ))
      ) {
        await this.pairedBaseline(pairKey(server, 'get', 'error'));
        await this.run(child, { ...label, logLevel: 'error' }, this.plan('get'));
        await this.pairedBaseline(pairKey(server, 'get', 'error'));
        await child.setLogLevel('info').catch(() => undefined);
      }
      await this.run(child, label, this.plan('list'));
      if (transport === 'stdlib') {
        // Scale figure: one caller, so the number is the query's own latency, not queueing.
        for (const scenario of ['list-offset-0', 'list-offset-10000'] as const) {
          await this.run(child, label, { scenario, concurrency: 1, durationMs: this.settings.listLatencyMs, warmupMs: 200 });
        }
      }
      const bare = { ...label, logLevel: 'none' };
      if (backend === 'real') await this.run(child, bare, this.plan('bare-insert'));
      await this.run(child, label, this.plan('post'));
      if (backend === 'real') await this.run(child, { ...bare, pairedFor: pairKey(server, 'post') }, this.pairedPlan('bare-insert'));
      // More POST / bare INSERT pairs: both drift with the machine, so the target is judged on medians.
      for (let round = 1; backend === 'real' && round < this.settings.postRounds; round++) {
        await this.run(child, { ...label, pairedFor: pairKey(server, 'post') }, this.pairedPlan('post'));
        await this.run(child, { ...bare, pairedFor: pairKey(server, 'post') }, this.pairedPlan('bare-insert'));
      }
      await this.run(child, label, this.plan('login'));
    } finally {
      if (transport === 'stdlib' && backend === 'real') {
        this.#stdlibControl = { child, label }; // stopped by stopAll
      } else {
        this.#children.delete(child);
        await child.stop();
      }
    }
  }
}

/**
 * wrk and h2load come from Debian (wrk, nghttp2-client). The bench is not part of CI: as root with
 * apt-get it installs them once; otherwise it stops and says what to install.
 */
function requireLoadGenerators(): void {
  const missing = (): string[] => (['wrk', 'h2load'] as const).filter((tool) => !hasTool(tool));
  if (missing().length > 0 && process.getuid?.() === 0)
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'wrk', 'nghttp2-client'], { stdio: 'ignore', timeout: 180_000 });
  if (missing().length > 0) throw new Error(`bench: install ${missing().join(' and ')} (Debian packages wrk, nghttp2-client)`);
}

/** `node ARGS` from the repository root: its stdout, or an error with the tail of its stderr. */
async function nodeOutput(args: readonly string[], timeoutMs: number): Promise<string> {
  try {
    return (
      await promisify(execFile)(process.execPath, args, { cwd: ROOT, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 2 ** 20 })
    ).stdout;
  } catch (error) {
    throw new Error(
      `${(error as Error).message.split('\n')[0]}: ${String((error as { stderr?: string }).stderr ?? '')
        .trim()
        .slice(-300)}`,
      { cause: error },
    );
  }
}

async function startupFigures(settings: Settings, bench: Bench, realReason: string | undefined): Promise<ScaleFigures['startup']> {
  const figures: ScaleFigures['startup'] = [];
  for (const mode of ['embedded', 'real'] as const) {
    const runsMs: number[] = [];
    let error = mode === 'real' && realReason !== undefined ? `real backends: ${realReason}` : undefined;
    for (let i = 0; i < settings.startupRuns && error === undefined; i++) {
      const schema = newSchemaName();
      if (mode === 'real') bench.schemas.push(schema);
      const result = await measureStartup(mode === 'real' ? { ...bench.real, POSTGRES_SCHEMA: schema } : undefined);
      if (result.readyMs === undefined) error = result.error;
      else runsMs.push(result.readyMs);
    }
    log(`  start-up ${mode}: ${runsMs.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}${error === undefined ? '' : ` (${error})`}`);
    figures.push({ mode, runsMs, error });
  }
  return figures;
}

/**
 * bench/grpc-peers/attacks.ts in its own process (it spawns the executable itself); its output is a
 * section of the report. Timings here are what the conformance cases may not assert.
 */
async function grpcAttacks(quick: boolean): Promise<string> {
  const resetSeconds = quick ? 5 : 20;
  log(`bench: gRPC attacks (rapid reset ${resetSeconds} s, gzip bombs, trickling streams)`);
  const args = ['bench/grpc-peers/attacks.ts', '--reset-seconds', String(resetSeconds)];
  const out = await nodeOutput(args, 300_000).catch((error: unknown) => `attacks failed: ${String(error)}\n`);
  const intro = `\`node ${args.join(' ')}\` against \`orders-grpc --embedded\` (its own process; loopback, bounded):`;
  return ['', '## gRPC attacks on the one-port listener', '', intro, '', '```', `${out.trimEnd()}`, '```', ''].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', default: TRANSPORTS.join(',') },
      backends: { type: 'string', default: 'fake,real' },
      'no-scale': { type: 'boolean', default: false },
      'no-login-flood': { type: 'boolean', default: false },
      'no-attacks': { type: 'boolean', default: false },
      out: { type: 'string', default: join(ROOT, 'reports') },
      json: { type: 'string' },
      // The service children with the speed ring (as the executables run) or the plain core (bench/server.ts).
      speed: { type: 'string', default: 'on' },
    },
  });
  if (values.speed !== 'on' && values.speed !== 'off') throw new Error('--speed takes on or off');
  process.env['BENCH_SPEED'] = values.speed;
  const settings = settingsFor(values.quick);
  const only = values.only.split(',') as TransportName[];
  const backends = values.backends.split(',') as BackendName[];
  const wallStart = performance.now();
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  const loadAverageStart = loadAverage();
  log(
    `bench: speed ring ${values.speed}; ${settings.quick ? 'quick' : 'full'} run on ${machine.nproc} × ${machine.cpuModel}, Node ${machine.node}, load average ${loadAverageStart.toFixed(2)}`,
  );
  requireLoadGenerators();

  const { env: real, fromDefaults } = realEnvFrom(process.env);
  const realReason = backends.includes('real') ? await realUnavailableReason(real) : 'not requested (--backends)';
  if (realReason !== undefined) log(`bench: real backends skipped: ${realReason}`);
  const pinning = detectPinning();
  // The orchestrator sits on the generators' core too.
  if (pinning !== undefined) pinProcess(process.pid, pinning.generatorCpu);
  pinGenerators(pinning?.generatorCpu);
  const placement =
    pinning === undefined
      ? 'not pinned (needs taskset and 2 CPUs)'
      : `server children on CPU ${pinning.serverCpu}, load generators on CPU ${pinning.generatorCpu} (taskset)`;
  log(`bench: ${placement}`);
  const bench = new Bench(settings, real, pinning);
  const dropBenchSchemas = async (): Promise<void> => {
    if (realReason === undefined)
      await dropSchemas(real.POSTGRES_DSN, bench.schemas).catch((error: unknown) =>
        log(`bench: dropping schemas failed: ${String(error)}`),
      );
  };

  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('bench: interrupted; stopping the server children and dropping bench schemas');
    void bench
      .stopAll()
      .then(dropBenchSchemas)
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let baselineEnd: Measurement | undefined;
  let scale: ScaleFigures = { sessions: { error: 'not measured (--no-scale)' }, startup: [] };
  try {
    log('baseline: bare node:http, same Order JSON, no I/O');
    await bench.startControls(realReason === undefined);
    for (const c of settings.sweep) await bench.baseline(c);
    for (const transport of TRANSPORTS.filter((t) => only.includes(t))) {
      for (const backend of backends) {
        if (backend === 'real' && realReason !== undefined) bench.skippedServers.push({ server: `${transport}/real`, reason: realReason });
        else await bench.service(transport, backend);
      }
    }
    if (!settings.quick) {
      log('baseline again (drift over the run)');
      baselineEnd = await bench.baseline(FIXED_CONCURRENCY);
      if (baselineEnd !== undefined) bench.measurements.pop(); // reported apart: the drift line, the last raw row
    }
    await bench.stopAll();
    // What follows spawns processes measured on their own (start-up, session heap, attacks, login flood):
    // they inherit this process's CPUs, so it gives the generator's core back first.
    if (pinning !== undefined) pinProcess(process.pid, `0-${availableParallelism() - 1}`);
    if (!values['no-scale']) {
      log('scale figures');
      const sessions: ScaleFigures['sessions'] = await nodeOutput(['--expose-gc', 'bench/session-heap.ts'], 120_000).then(
        (out) => JSON.parse(out) as SessionHeap,
        (error: Error) => ({ error: error.message }),
      );
      log(`  sessions: ${JSON.stringify(sessions)}`);
      scale = { sessions, startup: await startupFigures(settings, bench, realReason) };
    }
  } finally {
    await bench.stopAll();
    await dropBenchSchemas();
  }

  const run: BenchRun = {
    startedAt,
    wallSeconds: (performance.now() - wallStart) / 1000,
    machine,
    loadAverageStart,
    settings,
    measurements: bench.measurements,
    baselineEnd,
    skippedServers: bench.skippedServers,
    realBackends: { used: realReason === undefined, reason: realReason, fromDefaults },
    scale,
    pinning: placement,
    commands: [
      `# this report: npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      'npm run bench -- --quick            # < 3 min, indicative',
      'npm run bench                       # full, < 15 min',
      'node bench/profile.ts               # --cpu-prof of a GET-only run, top self-time functions',
      'node bench/ab.ts --a /tmp/bench-base --b /tmp/bench-scratch   # patch before/after, interleaved',
    ],
  };
  await mkdir(values.out, { recursive: true });
  // The attacks on the one-port listener, black-box on a spawned orders-grpc --embedded.
  const attacks = values['no-attacks'] ? '' : await grpcAttacks(settings.quick);
  await writeFile(join(values.out, 'bench.md'), renderMarkdown(run) + attacks);
  await writeFile(join(values.out, 'bench.svg'), renderSvg(run));
  if (values.json !== undefined) await writeFile(values.json, `${JSON.stringify(run, null, 2)}\n`);
  // The login gate under a flood (rules LOGIN-gate, LOGIN-gate-fair), each executable in its own process (bench/login-flood.ts).
  if (!values['no-login-flood']) {
    const flood = await runLoginFlood({ quick: settings.quick, only, log });
    await writeFile(
      join(values.out, 'login-flood.md'),
      ['# Login flood (rules LOGIN-gate, LOGIN-gate-fair)', '', '```', ...flood, '```', ''].join('\n'),
    );
  }
  log(`bench: wrote ${relative(process.cwd(), join(values.out, 'bench.md'))} and bench.svg in ${run.wallSeconds.toFixed(0)} s`);
}

if (import.meta.main) await main();
