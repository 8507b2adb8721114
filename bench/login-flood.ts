// The login gate under attack (issue 12; rules LOGIN-gate, LOGIN-gate-fair), against each executable
// in --embedded mode (its own process, production scrypt cost, default RATE_LIMIT_RPS=50):
//   sustained  logins/s the machine completes with the gate saturated by 4 well-behaved clients
//   rest-flood one client sends wrong-password logins at 45/s (within its rate limit) while a victim
//              on another source address logs in every 250 ms: the victim's latency p50/p99
//   grpc-flood orders-grpc only: waves of 300 parallel gRPC Logins (not rate-limited), same victim
// Run alone: node bench/login-flood.ts [--quick] [--only=stdlib,koa,grpc]; npm run bench runs it last.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { percentiles } from './percentiles.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROTO = fileURLToPath(new URL('../proto/ordersv1/orders.proto', import.meta.url));
const VICTIM = { username: 'alice', password: 'alice-password' };
const FLOODER_ADDRESS = '127.0.0.1';
const VICTIM_ADDRESS = '127.0.0.2';
const SUSTAIN_CLIENTS = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];

export type FloodTransport = 'stdlib' | 'koa' | 'grpc';

export interface VictimFigures {
  readonly attempts: number;
  readonly succeeded: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface FloodFigures {
  readonly transport: FloodTransport;
  /** Logins/s completed (200 or 401) with the gate saturated by several clients. */
  readonly sustainedPerSecond: number;
  readonly sustainedRefused: number;
  readonly restFlood: { readonly sent: number; readonly refused429: number; readonly victim: VictimFigures };
  readonly grpcFlood?: { readonly sent: number; readonly resourceExhausted: number; readonly victim: VictimFigures };
}

interface Answer {
  readonly status: number;
  readonly ms: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function login(port: number, localAddress: string, body: { username: string; password: string }): Promise<Answer> {
  const started = performance.now();
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/auth/login', method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.setTimeout(60_000, () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(text);
  });
}

function wrong(i: number): { username: string; password: string } {
  return { username: `flood-${i}`, password: 'wrong-password' };
}

async function startExecutable(transport: FloodTransport): Promise<{ child: ChildProcess; port: number }> {
  const [port, admin] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [`bin/orders-${transport}.ts`, '--embedded'], {
    cwd: ROOT,
    env: { ...process.env, HTTP_ADDR: `127.0.0.1:${port}`, ADMIN_ADDR: `127.0.0.1:${admin}`, LOG_LEVEL: 'error', RATE_LIMIT_RPS: '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await login(port, FLOODER_ADDRESS, VICTIM).catch(() => ({ status: 0, ms: 0 }));
    if (up.status === 200) return { child, port };
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`orders-${transport} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The victim logs in every `everyMs` until `until()` says stop; latency of each attempt. */
async function victim(port: number, everyMs: number, running: () => boolean): Promise<VictimFigures> {
  const samples: Answer[] = [];
  while (running()) {
    const next = performance.now() + everyMs;
    samples.push(await login(port, VICTIM_ADDRESS, VICTIM));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  const ok = samples.filter((s) => s.status === 200).map((s) => s.ms);
  const [p50 = NaN, p99 = NaN] = percentiles(ok, [50, 99]);
  return { attempts: samples.length, succeeded: ok.length, p50Ms: p50, p99Ms: p99, maxMs: Math.max(...samples.map((s) => s.ms)) };
}

async function sustained(port: number, durationMs: number): Promise<{ perSecond: number; refused: number }> {
  const end = performance.now() + durationMs;
  let done = 0;
  let refused = 0;
  const started = performance.now();
  // Two outstanding logins per client: the gate's per-client queue never overflows.
  await Promise.all(
    SUSTAIN_CLIENTS.flatMap((address, c) =>
      [0, 1].map(async (k) => {
        for (let i = 0; performance.now() < end; i++) {
          const answer = await login(port, address, wrong(c * 1_000_000 + k * 100_000 + i));
          if (answer.status === 429) refused += 1;
          else done += 1;
        }
      }),
    ),
  );
  return { perSecond: done / ((performance.now() - started) / 1000), refused };
}

async function restFlood(port: number, durationMs: number): Promise<FloodFigures['restFlood']> {
  let running = true;
  const sent: Promise<Answer>[] = [];
  // 45/s: inside the default RATE_LIMIT_RPS of 50, as in the attack.
  const flood = (async () => {
    const start = performance.now();
    for (let i = 0; performance.now() - start < durationMs; i++) {
      sent.push(login(port, FLOODER_ADDRESS, wrong(i)));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + ((i + 1) * 1000) / 45 - performance.now())));
    }
    running = false;
  })();
  const figures = await victim(port, 250, () => running);
  await flood;
  const answers = await Promise.all(sent);
  return { sent: answers.length, refused429: answers.filter((a) => a.status === 429).length, victim: figures };
}

async function grpcFlood(port: number, durationMs: number): Promise<NonNullable<FloodFigures['grpcFlood']>> {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true });
  const Orders = (grpc.loadPackageDefinition(definition)['ordersv1'] as grpc.GrpcObject)['Orders'] as grpc.ServiceClientConstructor;
  const client = new Orders(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = (i: number): Promise<number> =>
    new Promise((resolve) => (client['Login'] as (req: unknown, cb: (error: grpc.ServiceError | null) => void) => void)(wrong(i), (error) => resolve(error?.code ?? 0)));
  let running = true;
  let sent = 0;
  let exhausted = 0;
  const flood = (async () => {
    const start = performance.now();
    for (let wave = 0; performance.now() - start < durationMs && wave < 50; wave++) {
      const codes = await Promise.all(Array.from({ length: 300 }, (_, i) => call(wave * 300 + i)));
      sent += codes.length;
      exhausted += codes.filter((code) => code === grpc.status.RESOURCE_EXHAUSTED).length;
    }
    running = false;
  })();
  const figures = await victim(port, 250, () => running);
  await flood;
  client.close();
  return { sent, resourceExhausted: exhausted, victim: figures };
}

export async function runLoginFlood(options: { quick: boolean; only?: readonly FloodTransport[]; log: (line: string) => void }): Promise<FloodFigures[]> {
  const durationMs = options.quick ? 4_000 : 10_000;
  const out: FloodFigures[] = [];
  for (const transport of options.only ?? (['stdlib', 'koa', 'grpc'] as const)) {
    const { child, port } = await startExecutable(transport);
    try {
      const s = await sustained(port, durationMs);
      const rest = await restFlood(port, durationMs);
      const figures: FloodFigures = {
        transport,
        sustainedPerSecond: s.perSecond,
        sustainedRefused: s.refused,
        restFlood: rest,
        ...(transport === 'grpc' ? { grpcFlood: await grpcFlood(port, durationMs) } : {}),
      };
      options.log(formatFlood(figures));
      out.push(figures);
    } finally {
      child.kill('SIGTERM');
    }
  }
  return out;
}

function victimText(v: VictimFigures): string {
  return `victim ${v.succeeded}/${v.attempts} ok, p50 ${v.p50Ms.toFixed(0)} ms, p99 ${v.p99Ms.toFixed(0)} ms, max ${v.maxMs.toFixed(0)} ms`;
}

export function formatFlood(f: FloodFigures): string {
  const lines = [
    `login-flood ${f.transport}: sustained ${f.sustainedPerSecond.toFixed(1)} logins/s (${f.sustainedRefused} refused)`,
    `  one-client REST flood at 45/s: ${f.restFlood.sent} sent, ${f.restFlood.refused429} answered 429; ${victimText(f.restFlood.victim)}`,
  ];
  if (f.grpcFlood !== undefined) {
    lines.push(`  300-parallel gRPC Login waves: ${f.grpcFlood.sent} sent, ${f.grpcFlood.resourceExhausted} RESOURCE_EXHAUSTED; ${victimText(f.grpcFlood.victim)}`);
  }
  return lines.join('\n');
}

/** Markdown for the bench report directory (written next to bench.md by bench/run.ts). */
export function floodMarkdown(figures: readonly FloodFigures[]): string {
  return ['# Login flood (issue 12)', '', '```', ...figures.map(formatFlood), '```', ''].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
  const only = values.only?.split(',').filter((t): t is FloodTransport => t === 'stdlib' || t === 'koa' || t === 'grpc');
  await runLoginFlood({ quick: values.quick ?? false, ...(only ? { only } : {}), log: (line) => process.stdout.write(`${line}\n`) });
}
