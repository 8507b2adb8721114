#!/usr/bin/env node
// Part 5: where the GET path spends its CPU. Starts one server child under `node --cpu-prof`, runs a
// GET /orders/{id} (cache hit) load only (or POST /orders, or gRPC GetOrder: --scenario), stops the child (the profile is written at exit) and
// summarises the samples taken during the measured window. Usage:
//   node bench/profile.ts [--transport stdlib|koa|grpc] [--backend real|fake] [--scenario get|post|grpc-get]
//                         [--seconds 10] [--log-level info|error] [--top 25] [--md FILE]
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summarise, summaryMarkdown, type CpuProfile } from './cpuprofile-summary.ts';
import { runGrpcGetOrder } from './grpc-load.ts';
import { runHttpLoad, type HttpScenario } from './http-load.ts';
import type { LoadBounds, LoadResult } from './load-result.ts';
import type { BackendName, Fixtures, TransportName } from './ipc-protocol.ts';
import { dropSchemas, realEnvFrom, realUnavailableReason, vacuumAnalyzeOrders } from './real-env.ts';
import { SERVER_OPTIONS, ServerChild, serverChildConfig } from './server-child.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const { values } = parseArgs({
  options: {
    ...SERVER_OPTIONS,
    seconds: { type: 'string', default: '10' },
    md: { type: 'string' },
    top: { type: 'string', default: '25' },
    /** get = REST GET /orders/{id}; post = REST POST /orders; list-deep = GET /orders?limit=20&offset=10000 (20,000 orders); grpc-get = ordersv1.Orders/GetOrder (grpc transport only). */
    scenario: { type: 'string', default: 'get' },
  },
});
const transport = values.transport as TransportName;
let backend = values.backend as BackendName;
const { env: real } = realEnvFrom(process.env);
if (backend === 'real') {
  const reason = await realUnavailableReason(real);
  if (reason !== undefined) {
    process.stderr.write(`profile: real backends unavailable (${reason}); profiling the fakes\n`);
    backend = 'fake';
  }
}
const profileDir = await mkdtemp(join(tmpdir(), 'bench-cpuprof-'));
const listDeep = values.scenario === 'list-deep';
const config = serverChildConfig(transport, backend, values['log-level'], listDeep ? 20_000 : 0);
const schema = config.schema;
const child = await ServerChild.start({
  script: join(ROOT, 'bench/server.ts'),
  env: { ...process.env, ...real, BENCH_SERVER_CONFIG: JSON.stringify(config) },
  execArgv: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  cwd: ROOT,
});
const fixtures = child.ready.fixtures as Fixtures;
// As npm run bench does: the steady state autovacuum keeps the table in (migration 002).
if (listDeep && schema !== undefined) await vacuumAnalyzeOrders(real.POSTGRES_DSN, schema);
const post = values.scenario === 'post';
const scenario: HttpScenario = listDeep
  ? { method: 'GET', url: `http://127.0.0.1:${child.ready.port}/orders?limit=20&offset=10000`, headers: { authorization: `Bearer ${fixtures.listToken}` } }
  : post
  ? {
      method: 'POST',
      url: `http://127.0.0.1:${child.ready.port}/orders`,
      headers: { authorization: `Bearer ${fixtures.postToken}`, 'content-type': 'application/json' },
      body: '{"item":"bench item","quantity":1}',
    }
  : { method: 'GET', url: `http://127.0.0.1:${child.ready.port}/orders/${fixtures.getOrderId}`, headers: { authorization: `Bearer ${fixtures.getToken}` } };
const grpc = values.scenario === 'grpc-get';
const load = (bounds: LoadBounds): Promise<LoadResult> =>
  grpc ? runGrpcGetOrder(child.ready.port, fixtures.getToken, fixtures.getOrderId, bounds) : runHttpLoad(scenario, bounds);
const concurrency = Number(values.concurrency);
const durationMs = Number(values.seconds) * 1000;
let from: number;
let to: number;
let line: string;
try {
  await load({ concurrency, durationMs: 2_000, maxRequests: 1_000_000 }); // JIT warm-up, outside the window
  from = (await child.sample(true)).monotonicUs;
  const result = await load({ concurrency, durationMs, maxRequests: 2_000_000 });
  to = (await child.sample(false)).monotonicUs;
  line = `${grpc ? 'gRPC GetOrder' : listDeep ? 'GET /orders?limit=20&offset=10000' : post ? 'POST /orders' : 'GET /orders/{id}'}, ${transport}/${backend}, LOG_LEVEL=${config.logLevel}, ${concurrency} connections, ${values.seconds} s: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`;
} finally {
  await child.stop();
  if (schema !== undefined) await dropSchemas(real.POSTGRES_DSN, [schema]);
}
const file = (await readdir(profileDir)).find((name) => name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error(`no .cpuprofile written in ${profileDir}`);
const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as CpuProfile;
const summary = summarise(profile, { fromUs: from, toUs: to, top: Number(values.top) });
const markdown =
  `${summaryMarkdown(summary, `### CPU profile: ${line}`)}\n` +
  `Profile: ${join(profileDir, file)} (measured window: --from ${from} --to ${to} for bench/cpuprofile-summary.ts)\n`;
process.stdout.write(markdown);
if (values.md !== undefined) await writeFile(values.md, markdown);
