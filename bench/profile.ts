#!/usr/bin/env node
// Where a scenario spends its CPU: one server child under `node --cpu-prof`, a warm-up, a measured
// load of one scenario (get = GET /orders/{id} cache hit, post = POST /orders, list-deep = GET
// /orders?limit=20&offset=10000 of 20,000 orders, grpc-get = gRPC GetOrder), then the child is stopped
// (the profile is written at exit) and the samples of the measured window are summed by self time per
// function and per package. Usage:
//   node bench/profile.ts [--transport stdlib|koa|grpc] [--backend real|fake] [--scenario get|post|list-deep|grpc-get]
//                         [--seconds 10] [--log-level info|error] [--top 25] [--md FILE]
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import type { Profiler, Runtime } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVER_OPTIONS, serverChildConfig, startServer, type BackendName, type TransportName } from './child.ts';
import { scenarioLoad } from './measure.ts';
import { table } from './report.ts';
import { dropSchemas, realEnvFrom, realUnavailableReason, vacuumAnalyzeOrders } from './real-env.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    ...SERVER_OPTIONS,
    seconds: { type: 'string', default: '10' },
    md: { type: 'string' },
    top: { type: 'string', default: '25' },
    scenario: { type: 'string', default: 'get' },
  },
});
const scenario = values.scenario === 'list-deep' ? 'list-offset-10000' : (values.scenario as 'get' | 'post' | 'grpc-get');
const { env: real } = realEnvFrom(process.env);
let backend = values.backend as BackendName;
const reason = backend === 'real' ? await realUnavailableReason(real) : undefined;
if (reason !== undefined) {
  process.stderr.write(`profile: real backends unavailable (${reason}); profiling the fakes\n`);
  backend = 'fake';
}
const profileDir = await mkdtemp(join(tmpdir(), 'bench-cpuprof-'));
const config = serverChildConfig(
  values.transport as TransportName,
  backend,
  values['log-level'],
  scenario === 'list-offset-10000' ? 20_000 : 0,
);
const child = await startServer(ROOT, config, real, { execArgv: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
const concurrency = Number(values.concurrency);
let window: { from: number; to: number };
let line: string;
try {
  // As npm run bench does: the steady state autovacuum keeps the table in (migration 002).
  if (config.schema !== undefined) await vacuumAnalyzeOrders(real.POSTGRES_DSN, config.schema);
  const load = scenarioLoad(child, scenario);
  await load({ concurrency, durationMs: 2_000 }); // JIT warm-up, outside the window
  const from = (await child.sample(true)).monotonicUs;
  const result = await load({ concurrency, durationMs: Number(values.seconds) * 1000 });
  window = { from, to: (await child.sample(false)).monotonicUs };
  line = `${values.scenario}, ${config.transport}/${backend}, LOG_LEVEL=${config.logLevel}, ${concurrency} connections, ${values.seconds} s: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`;
} finally {
  await child.stop();
  if (config.schema !== undefined) await dropSchemas(real.POSTGRES_DSN, [config.schema]);
}

/** The file of a frame: from the package in node_modules, or from src/, fakes/, bench/ or bin/ of this repository. */
function shortUrl(url: string): string {
  return url.includes('node_modules/')
    ? (url.split('node_modules/').at(-1) ?? url)
    : (/\/((?:src|fakes|bench|bin)\/.*)$/.exec(url)?.[1] ?? url);
}

/** A package, node internals, an area of this repository (src/transports, …) or a V8 pseudo-frame. */
function packageOf({ url, functionName }: Runtime.CallFrame): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url.split('/')[0] ?? url;
  const parts = shortUrl(url).split('/');
  return parts.slice(0, url.includes('node_modules/') && !parts[0]?.startsWith('@') ? 1 : 2).join('/');
}

const frameName = (frame: Runtime.CallFrame): string =>
  `${frame.functionName || '(anonymous)'}${frame.url === '' ? '' : ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}`}`;

const file = (await readdir(profileDir)).find((name) => name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error(`no .cpuprofile written in ${profileDir}`);
const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as Required<Profiler.Profile>;
const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
let totalUs = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  const frame = frames.get(profile.samples[i] as number);
  if (t < window.from || t > window.to || frame === undefined || frame.functionName === '(idle)') continue;
  // A sample's weight is the interval until the next one (the usual self-time attribution).
  const weight = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
  totalUs += weight;
  byFunction.set(frameName(frame), (byFunction.get(frameName(frame)) ?? 0) + weight);
  byPackage.set(packageOf(frame), (byPackage.get(packageOf(frame)) ?? 0) + weight);
}
const top = (map: Map<string, number>): string[][] =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top))
    .map(([name, us]) => [`\`${name}\``, (us / 1000).toFixed(0), `${((us / totalUs) * 100).toFixed(1)}%`]);
const markdown = [
  `### CPU profile: ${line}`,
  '',
  `${(totalUs / 1000).toFixed(0)} ms of non-idle CPU sampled in the measured window. Profile: ${join(profileDir, file)}`,
  '',
  ...table(['self time: package / area', 'ms', 'share'], top(byPackage)),
  '',
  ...table(['self time: function', 'ms', 'share'], top(byFunction)),
  '',
].join('\n');
process.stdout.write(markdown);
if (values.md !== undefined) await writeFile(values.md, markdown);
