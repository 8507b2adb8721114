#!/usr/bin/env node
// Before/after for a change: two copies of the repo, A unpatched and
// B patched, each serving from its own child process, loaded alternately (A B B A A B ...) so that
// whatever else the shared machine does hits both sides alike. Prints B/A per scenario. Usage:
//   cp -r /work/main /tmp/bench-base && cp -r /work/main /tmp/bench-scratch
//   (cd /tmp/bench-scratch && git apply /tmp/change.patch)
//   node bench/ab.ts --a /tmp/bench-base --b /tmp/bench-scratch [--transport stdlib] [--backend real]
//                    [--scenarios get,post,grpc-get] [--rounds 4] [--seconds 3] [--sessions] [--startup]
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runGrpcGetOrder } from './grpc-load.ts';
import { httpGeneratorName, runHttpLoad, useHttpGenerator, type HttpScenario } from './http-load.ts';
import { detectPinning, loadTools, pinProcess } from './pinning.ts';
import type { BackendName, Fixtures, TransportName } from './ipc-protocol.ts';
import type { LoadBounds, LoadResult } from './load-result.ts';
import { loadAverage } from './machine.ts';
import { median } from './percentiles.ts';
import { dropSchemas, realEnvFrom, realUnavailableReason } from './real-env.ts';
import { SERVER_OPTIONS, ServerChild, serverChildConfig } from './server-child.ts';
import { measureStartup } from './startup-time.ts';

type Scenario = 'get' | 'list' | 'post' | 'grpc-get';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    ...SERVER_OPTIONS,
    scenarios: { type: 'string', default: 'get' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '3' },
    sessions: { type: 'boolean', default: false },
    startup: { type: 'boolean', default: false },
  },
});
if (values.a === undefined || values.b === undefined) {
  process.stderr.write('usage: node bench/ab.ts --a ROOT_BEFORE --b ROOT_AFTER [options]; see the header of bench/ab.ts\n');
  process.exit(2);
}
const roots = { A: resolve(values.a), B: resolve(values.b) } as const;
const transport = values.transport as TransportName;
const backend = values.backend as BackendName;
const scenarios = (values.scenarios ?? 'get').split(',').filter((s) => s !== '') as Scenario[];
const rounds = Number(values.rounds);
const bounds: LoadBounds = { concurrency: Number(values.concurrency), durationMs: Number(values.seconds) * 1000, maxRequests: 2_000_000 };
const { env: real } = realEnvFrom(process.env);
if (backend === 'real' || values.startup) {
  const reason = await realUnavailableReason(real);
  if (reason !== undefined && backend === 'real') throw new Error(`real backends unavailable: ${reason}`);
}
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const schemas: string[] = [];
// As npm run bench measures (issue 16): both sides on one core, the generator (and this process) on another.
const pinning = detectPinning();
if (pinning !== undefined) pinProcess(process.pid, pinning.generatorCpu);
useHttpGenerator(loadTools().wrk ? 'wrk' : 'autocannon', pinning?.generatorCpu);
log(`ab: HTTP load by ${httpGeneratorName()}${pinning === undefined ? ', not pinned' : `, servers on CPU ${pinning.serverCpu}`}`);

type Runs = { result: LoadResult; cpuPer1k: number }[];

interface Side {
  readonly name: 'A' | 'B';
  readonly child: ServerChild;
  readonly results: Map<Scenario, Runs>;
}

async function startSide(name: 'A' | 'B'): Promise<Side> {
  const config = serverChildConfig(transport, backend, values['log-level'], scenarios.includes('list') ? 10_000 : 0);
  if (config.schema !== undefined) schemas.push(config.schema);
  const child = await ServerChild.start({
    script: join(roots[name], 'bench/server.ts'),
    env: { ...process.env, ...real, BENCH_SERVER_CONFIG: JSON.stringify(config) },
    cwd: roots[name],
    pinCpu: pinning?.serverCpu,
  });
  return { name, child, results: new Map() };
}

function load(side: Side, scenario: Scenario, b: LoadBounds): Promise<LoadResult> {
  const f = side.child.ready.fixtures as Fixtures;
  const base = `http://127.0.0.1:${side.child.ready.port}`;
  if (scenario === 'grpc-get') return runGrpcGetOrder(side.child.ready.port, f.getToken, f.getOrderId, b);
  const request: HttpScenario =
    scenario === 'get'
      ? { method: 'GET', url: `${base}/orders/${f.getOrderId}`, headers: { authorization: `Bearer ${f.getToken}` } }
      : scenario === 'list'
        ? { method: 'GET', url: `${base}/orders?limit=20`, headers: { authorization: `Bearer ${f.listToken}` } }
        : {
            method: 'POST',
            url: `${base}/orders`,
            headers: { authorization: `Bearer ${f.postToken}`, 'content-type': 'application/json' },
            body: '{"item":"bench item","quantity":1}',
          };
  return runHttpLoad(request, b);
}

async function measureOnce(side: Side, scenario: Scenario): Promise<void> {
  const before = await side.child.sample(true);
  const result = await load(side, scenario, bounds);
  const after = await side.child.sample(false);
  const cpu = (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / 1e6;
  const list = side.results.get(scenario) ?? [];
  list.push({ result, cpuPer1k: (cpu / Math.max(1, result.served)) * 1000 });
  side.results.set(scenario, list);
  log(
    `  ${side.name} ${scenario}: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, ${((cpu / Math.max(1, result.served)) * 1000).toFixed(3)} CPU-s/1k` +
      `${result.failed > 0 ? `, ${result.failed} failed (${result.firstFailure ?? ''})` : ''}, load ${loadAverage().toFixed(2)}`,
  );
}

function sessionHeap(root: string): Promise<{ lingering: { totalBytes: number; bytesPerSession: number }; held: { totalBytes: number; bytesPerSession: number } }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(root, 'bench/session-heap.ts')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => (code === 0 ? resolvePromise(JSON.parse(out)) : reject(new Error(`session-heap exited ${code}`))));
  });
}

const lines: string[] = [];
try {
  if (scenarios.length > 0) {
    log(`ab: ${transport}/${backend}, ${rounds} rounds × ${values.seconds} s per side and scenario, ${bounds.concurrency} connections`);
    const sides = [await startSide('A'), await startSide('B')];
    try {
      for (const side of sides) for (const scenario of scenarios) await load(side, scenario, { ...bounds, durationMs: 1_500 }); // warm-up
      for (let round = 0; round < rounds; round++) {
        // A B, then B A: neither side always goes first.
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const scenario of scenarios) for (const side of order) await measureOnce(side, scenario);
      }
    } finally {
      for (const side of sides) await side.child.stop();
    }
    lines.push(`| scenario | A req/s (median) | B req/s (median) | B/A | A p99 ms | B p99 ms | A CPU-s/1k | B CPU-s/1k |`, '| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const scenario of scenarios) {
      const [a, b] = sides.map((side) => side.results.get(scenario) ?? []) as [Runs, Runs];
      const rpsA = median(a.map((x) => x.result.requestsPerSecond));
      const rpsB = median(b.map((x) => x.result.requestsPerSecond));
      lines.push(
        `| ${scenario} | ${rpsA.toFixed(0)} | ${rpsB.toFixed(0)} | **${(rpsB / rpsA).toFixed(2)}** | ${median(a.map((x) => x.result.p99Ms)).toFixed(2)} | ${median(b.map((x) => x.result.p99Ms)).toFixed(2)} | ` +
          `${median(a.map((x) => x.cpuPer1k)).toFixed(3)} | ${median(b.map((x) => x.cpuPer1k)).toFixed(3)} |`,
      );
    }
  }
  if (values.sessions) {
    const [a, b] = [await sessionHeap(roots.A), await sessionHeap(roots.B)];
    const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
    lines.push('', '| 50,000 sessions | A heap | B heap | B/A |', '| --- | --- | --- | --- |');
    for (const state of ['lingering', 'held'] as const) {
      lines.push(`| ${state} | ${mb(a[state].totalBytes)} (${a[state].bytesPerSession.toFixed(0)} B) | ${mb(b[state].totalBytes)} (${b[state].bytesPerSession.toFixed(0)} B) | **${(b[state].totalBytes / a[state].totalBytes).toFixed(2)}** |`);
    }
  }
  if (values.startup) {
    const runs: Record<'A' | 'B', number[]> = { A: [], B: [] };
    for (let i = 0; i < 3; i++) {
      for (const name of i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
        const r = await measureStartup(roots[name], true, {});
        if (r.readyMs !== undefined) runs[name].push(r.readyMs);
      }
    }
    lines.push('', '| start-up embedded | A median ms | B median ms | B/A |', '| --- | --- | --- | --- |');
    lines.push(`| orders-stdlib --embedded | ${median(runs.A).toFixed(0)} | ${median(runs.B).toFixed(0)} | **${(median(runs.B) / median(runs.A)).toFixed(2)}** |`);
  }
} finally {
  if (schemas.length > 0) await dropSchemas(real.POSTGRES_DSN, schemas);
}
process.stdout.write(`${lines.join('\n')}\n`);
