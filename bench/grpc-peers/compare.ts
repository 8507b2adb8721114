#!/usr/bin/env node
// Issue 18: gRPC GetOrder on this service and on its peers (grpc-js, Connect as-was, Connect tuned),
// all in ONE service child, loaded in alternating rounds so whatever else the shared machine does hits
// every server alike; plus the REST GET of the same process for the 50% target. Prints the median
// server CPU per call and calls/s of each. Usage:
//   node bench/grpc-peers/compare.ts [--backend real] [--rounds 5] [--seconds 3] [--concurrency 32]
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runGrpcGetOrder } from '../grpc-load.ts';
import { runHttpLoad } from '../http-load.ts';
import type { BackendName, Fixtures, ServerChildConfig } from '../ipc-protocol.ts';
import type { LoadResult } from '../load-result.ts';
import { loadAverage } from '../machine.ts';
import { median } from '../percentiles.ts';
import { dropSchemas, newSchemaName, realEnvFrom, realUnavailableReason } from '../real-env.ts';
import { ServerChild } from '../server-child.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'real' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
  },
});
const backend = values.backend as BackendName;
const rounds = Number(values.rounds);
const bounds = { concurrency: Number(values.concurrency), durationMs: Number(values.seconds) * 1000, maxRequests: 1_000_000 };
const { env: real } = realEnvFrom(process.env);
if (backend === 'real') {
  const reason = await realUnavailableReason(real);
  if (reason !== undefined) throw new Error(`real backends: ${reason}`);
}
const schema = backend === 'real' ? newSchemaName() : undefined;
const config: ServerChildConfig = { transport: 'grpc', backend, logLevel: 'info', listOrders: 0, schema, uniqueSuffix: schema?.replace(/^bench_/, 'bench') };
const child = await ServerChild.start({ script: join(ROOT, 'bench/server.ts'), env: { ...process.env, ...real, BENCH_SERVER_CONFIG: JSON.stringify(config) }, cwd: ROOT });
const f = child.ready.fixtures as Fixtures;
type Subject = { readonly name: string; readonly run: () => Promise<LoadResult> };
const grpcOn = (port: number) => () => runGrpcGetOrder(port, f.getToken, f.getOrderId, bounds);
const subjects: Subject[] = [
  { name: 'orders-grpc (unary-server)', run: grpcOn(child.ready.port) },
  ...(child.ready.grpcPeers ?? []).map((peer) => ({ name: `peer ${peer.name}`, run: grpcOn(peer.port) })),
  {
    name: 'REST GET /orders/{id} (same process)',
    run: () => runHttpLoad({ method: 'GET', url: `http://127.0.0.1:${child.ready.port}/orders/${f.getOrderId}`, headers: { authorization: `Bearer ${f.getToken}` } }, bounds),
  },
];
const cpuUs = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
const rps = new Map<string, number[]>(subjects.map((s) => [s.name, []]));
try {
  for (const s of subjects) await s.run(); // warm-up, dropped
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? subjects : [...subjects].reverse();
    for (const s of order) {
      const before = await child.sample(true);
      const result = await s.run();
      const after = await child.sample(false);
      const cpu = (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / Math.max(result.served, 1);
      cpuUs.get(s.name)!.push(cpu);
      rps.get(s.name)!.push(result.requestsPerSecond);
      process.stderr.write(`round ${round + 1} ${s.name}: ${result.requestsPerSecond.toFixed(0)}/s, ${cpu.toFixed(0)} µs CPU per call, ${result.failed} failed, load ${loadAverage().toFixed(1)}\n`);
    }
  }
} finally {
  await child.stop();
  if (schema !== undefined) await dropSchemas(real.POSTGRES_DSN, [schema]).catch(() => undefined);
}
const rest = median(rps.get(subjects.at(-1)!.name)!);
const grpcJs = median(cpuUs.get('peer grpc-js') ?? []);
console.log(`\n${backend} backends, ${rounds} alternating rounds of ${values.seconds} s at ${bounds.concurrency} concurrent calls (medians):\n`);
console.log('| server | calls/s | % of REST GET calls/s | CPU µs per call | vs grpc-js |');
console.log('| --- | --- | --- | --- | --- |');
for (const s of subjects) {
  const c = median(cpuUs.get(s.name)!);
  const r = median(rps.get(s.name)!);
  console.log(`| ${s.name} | ${r.toFixed(0)} | ${((r / rest) * 100).toFixed(0)}% | ${c.toFixed(0)} | ${(c / grpcJs).toFixed(2)}× |`);
}
