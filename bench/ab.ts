#!/usr/bin/env node
// Before/after for a change: two copies of the repo, A unpatched and B patched, each serving from its
// own child process, loaded alternately (A B, then B A, ...) so that whatever else the shared machine
// does hits both sides alike. Prints B/A per scenario. Usage:
//   cp -r /work/main /tmp/bench-base && cp -r /work/main /tmp/bench-scratch
//   (cd /tmp/bench-scratch && git apply /tmp/change.patch)
//   node bench/ab.ts --a /tmp/bench-base --b /tmp/bench-scratch [--transport stdlib] [--backend real]
//                    [--scenarios get,list,post,grpc-get] [--rounds 4] [--seconds 3]
// --a-transport / --b-transport (default --transport) compare two transports of one checkout instead:
//   node bench/ab.ts --a . --b . --a-transport stdlib --b-transport koa
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SERVER_OPTIONS, serverChildConfig, startServer, type BackendName, type ServerChild, type TransportName } from './child.ts';
import { pinGenerators } from './load.ts';
import { measure, type Measurement, type ScenarioId } from './measure.ts';
import { median } from './percentiles.ts';
import { rawRow, table } from './report.ts';
import { detectPinning, pinProcess } from './machine.ts';
import { dropSchemas, realEnvFrom, realUnavailableReason } from './real-env.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    ...SERVER_OPTIONS,
    scenarios: { type: 'string', default: 'get' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '3' },
    'a-transport': { type: 'string' },
    'b-transport': { type: 'string' },
  },
});
if (values.a === undefined || values.b === undefined) {
  process.stderr.write('usage: node bench/ab.ts --a ROOT_BEFORE --b ROOT_AFTER [options]; see the header of bench/ab.ts\n');
  process.exit(2);
}
const scenarios = values.scenarios.split(',').filter((s) => s !== '') as ScenarioId[];
const backend = values.backend as BackendName;
const { env: real } = realEnvFrom(process.env);
const reason = backend === 'real' ? await realUnavailableReason(real) : undefined;
if (reason !== undefined) throw new Error(`real backends unavailable: ${reason}`);
// As npm run bench measures: both sides on one core, the generator (and this process) on another.
const pinning = detectPinning();
if (pinning !== undefined) pinProcess(process.pid, pinning.generatorCpu);
pinGenerators(pinning?.generatorCpu);
const plan = (scenario: ScenarioId, warmupMs: number) => ({
  scenario,
  concurrency: Number(values.concurrency),
  durationMs: Number(values.seconds) * 1000,
  warmupMs,
});
process.stderr.write(
  `ab: A ${values['a-transport'] ?? values.transport}, B ${values['b-transport'] ?? values.transport}, ${backend}, ${values.rounds} rounds × ${values.seconds} s per side and scenario, ${values.concurrency} connections, ${pinning === undefined ? 'not pinned' : `servers on CPU ${pinning.serverCpu}`}\n`,
);

const schemas: string[] = [];
const sides: { name: 'A' | 'B'; child: ServerChild; runs: Map<ScenarioId, Measurement[]> }[] = [];
try {
  for (const [name, root, transport] of [
    ['A', values.a, values['a-transport']],
    ['B', values.b, values['b-transport']],
  ] as const) {
    const config = serverChildConfig(
      (transport ?? values.transport) as TransportName,
      backend,
      values['log-level'],
      scenarios.includes('list') ? 10_000 : 0,
    );
    if (config.schema !== undefined) schemas.push(config.schema);
    sides.push({ name, child: await startServer(resolve(root), config, real, { pinCpu: pinning?.serverCpu }), runs: new Map() });
  }
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const scenario of scenarios) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        // The first round of each side warms it up (numbers dropped, as in npm run bench).
        const m = await measure(side.child, { server: side.name, logLevel: values['log-level'] }, plan(scenario, round === 0 ? 1_500 : 0));
        side.runs.set(scenario, [...(side.runs.get(scenario) ?? []), m]);
        process.stderr.write(`  ${rawRow(m).join(' | ')}\n`);
      }
    }
  }
} finally {
  await Promise.all(sides.map((side) => side.child.stop()));
  await dropSchemas(real.POSTGRES_DSN, schemas);
}
const rows = scenarios.map((scenario) => {
  const [a, b] = sides.map((side) => (side.runs.get(scenario) ?? []).filter((m) => m.result !== undefined)) as [
    Measurement[],
    Measurement[],
  ];
  const rps = (runs: Measurement[]): number => median(runs.map((m) => m.result?.requestsPerSecond ?? Number.NaN));
  const p99 = (runs: Measurement[]): string => median(runs.map((m) => m.result?.p99Ms ?? Number.NaN)).toFixed(2);
  const cpu = (runs: Measurement[]): string => median(runs.map((m) => m.cpuSecondsPer1k)).toFixed(3);
  return [scenario, rps(a).toFixed(0), rps(b).toFixed(0), `**${(rps(b) / rps(a)).toFixed(2)}**`, p99(a), p99(b), cpu(a), cpu(b)];
});
process.stdout.write(
  `${table(['scenario', 'A req/s (median)', 'B req/s (median)', 'B/A', 'A p99 ms', 'B p99 ms', 'A CPU-s/1k', 'B CPU-s/1k'], rows).join('\n')}\n`,
);
