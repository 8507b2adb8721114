// The login gate under attack (rules LOGIN-gate, LOGIN-gate-fair), against each executable
// in --embedded mode (its own process, production scrypt cost, default RATE_LIMIT_RPS=50):
//   sustained  logins/s the machine completes with the gate saturated by 4 well-behaved clients
//   rest-flood one client sends wrong-password logins at 45/s (within its rate limit) while a victim
//              on another source address logs in every 250 ms: the victim's latency p50/p99
//   grpc-flood orders-grpc only: waves of 300 parallel gRPC Logins (not rate-limited), same victim
// Run alone: node bench/login-flood.ts [--quick] [--only=stdlib,koa,grpc]; npm run bench runs it last.
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { freePort } from '../test/support/ports.ts';
import { spawnBin } from '../test/support/spawn-bin.ts';
import { ORDERS_PROTO } from '../conformance/drivers/grpc.ts';
import { percentiles } from './percentiles.ts';

const VICTIM = { username: 'alice', password: 'alice-password' };
const FLOODER_ADDRESS = '127.0.0.1';
const VICTIM_ADDRESS = '127.0.0.2';
const SUSTAIN_CLIENTS = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];

type Answer = { readonly status: number; readonly ms: number };

function login(port: number, localAddress: string, body: { username: string; password: string }): Promise<Answer> {
  const started = performance.now();
  const text = JSON.stringify(body);
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/auth/login', method: 'POST', localAddress, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.setTimeout(60_000, () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(text);
  });
}

const wrong = (i: number): { username: string; password: string } => ({ username: `flood-${i}`, password: 'wrong-password' });

/**
 * The victim logs in every 250 ms while `flood` runs; its latencies. The flood keeps going for
 * `durationMs` (or its own bound) and returns its summary.
 */
async function underFlood(port: number, flood: () => Promise<string>): Promise<string> {
  let running = true;
  const flooding = flood().finally(() => (running = false));
  const samples: Answer[] = [];
  while (running) {
    const next = performance.now() + 250;
    samples.push(await login(port, VICTIM_ADDRESS, VICTIM));
    await sleep(Math.max(0, next - performance.now()));
  }
  const ok = samples.filter((s) => s.status === 200).map((s) => s.ms);
  const [p50 = NaN, p99 = NaN] = percentiles(ok, [50, 99]);
  const max = Math.max(...samples.map((s) => s.ms));
  return `${await flooding}; victim ${ok.length}/${samples.length} ok, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms`;
}

async function sustained(port: number, durationMs: number): Promise<string> {
  const started = performance.now();
  let done = 0;
  let refused = 0;
  // Two outstanding logins per client: the gate's per-client queue never overflows.
  const loop = async (address: string, stream: number): Promise<void> => {
    for (let i = 0; performance.now() < started + durationMs; i++) {
      if ((await login(port, address, wrong(stream * 100_000 + i))).status === 429) refused += 1;
      else done += 1;
    }
  };
  await Promise.all(SUSTAIN_CLIENTS.flatMap((address, c) => [loop(address, 2 * c), loop(address, 2 * c + 1)]));
  return `sustained ${(done / ((performance.now() - started) / 1000)).toFixed(1)} logins/s (${refused} refused)`;
}

/** 45/s: inside the default RATE_LIMIT_RPS of 50, as in the attack. */
async function restFlood(port: number, durationMs: number): Promise<string> {
  const sent: Promise<Answer>[] = [];
  const start = performance.now();
  for (let i = 0; performance.now() - start < durationMs; i++) {
    sent.push(login(port, FLOODER_ADDRESS, wrong(i)));
    await sleep(Math.max(0, start + ((i + 1) * 1000) / 45 - performance.now()));
  }
  const answers = await Promise.all(sent);
  return `one-client REST flood at 45/s: ${answers.length} sent, ${answers.filter((a) => a.status === 429).length} answered 429`;
}

type LoginClient = grpc.Client & { Login(request: object, callback: (error: grpc.ServiceError | null) => void): void };

/** One grpc-js channel (one connection) for every wave, as a client application would hold it. */
async function grpcFlood(port: number, durationMs: number): Promise<string> {
  const { Orders } = (
    grpc.loadPackageDefinition(ORDERS_PROTO) as unknown as {
      ordersv1: { Orders: new (target: string, credentials: grpc.ChannelCredentials) => LoginClient };
    }
  ).ordersv1;
  const client = new Orders(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = (i: number): Promise<number> => new Promise((resolve) => client.Login(wrong(i), (error) => resolve(error?.code ?? 0)));
  let sent = 0;
  let exhausted = 0;
  const start = performance.now();
  for (let wave = 0; performance.now() - start < durationMs && wave < 50; wave++) {
    const codes = await Promise.all(Array.from({ length: 300 }, (_, i) => call(wave * 300 + i)));
    sent += codes.length;
    exhausted += codes.filter((code) => code === grpc.status.RESOURCE_EXHAUSTED).length;
  }
  client.close();
  return `300-parallel gRPC Login waves: ${sent} sent, ${exhausted} RESOURCE_EXHAUSTED`;
}

/** One block of lines per executable, for the log and reports/login-flood.md (written by bench/run.ts). */
export async function runLoginFlood(options: { quick: boolean; only?: readonly string[]; log: (line: string) => void }): Promise<string[]> {
  const durationMs = options.quick ? 4_000 : 10_000;
  const out: string[] = [];
  for (const transport of (['stdlib', 'koa', 'grpc'] as const).filter((t) => options.only?.includes(t) ?? true)) {
    const [port, admin] = [await freePort(), await freePort()];
    const bin = spawnBin(`bin/orders-${transport}.ts`, ['--embedded'], {
      HTTP_ADDR: `127.0.0.1:${port}`,
      ADMIN_ADDR: `127.0.0.1:${admin}`,
      LOG_LEVEL: 'error',
    });
    try {
      await bin.waitReady(`http://127.0.0.1:${admin}`, 60_000);
      const lines = [
        `login-flood ${transport}: ${await sustained(port, durationMs)}`,
        `  ${await underFlood(port, () => restFlood(port, durationMs))}`,
      ];
      if (transport === 'grpc') lines.push(`  ${await underFlood(port, () => grpcFlood(port, durationMs))}`);
      options.log(lines.join('\n'));
      out.push(...lines);
    } finally {
      await bin.stop();
    }
  }
  return out;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
  await runLoginFlood({ quick: values.quick, only: values.only?.split(','), log: (line) => process.stdout.write(`${line}\n`) });
}
