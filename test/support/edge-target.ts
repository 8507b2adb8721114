import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { spawnBin, type SpawnedBin } from './spawn-bin.ts';

/**
 * An executable started with `--embedded` as the target of the edge attacks (bench/edge/attacks.ts, test/edge):
 * its public origin, a user with 100 orders whose list answers are ~25 KB, the server's RSS from /proc,
 * and a bystander that reads its own order every 100 ms from another loopback address.
 */
export interface EdgeTarget {
  readonly bin: SpawnedBin;
  readonly port: number;
  readonly origin: string;
  readonly auth: string;
  readonly orderId: string;
  rssMiB(): number;
  stop(): Promise<void>;
}

export type Executable = 'stdlib' | 'koa' | 'grpc';

export async function startTarget(executable: Executable, env: Record<string, string> = {}): Promise<EdgeTarget> {
  const path = fileURLToPath(new URL(`../../bin/orders-${executable}.ts`, import.meta.url));
  // Rate limiting would answer most attack requests with a small 429: the worst case is an unlimited one.
  const bin = spawnBin(path, ['--embedded'], {
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_RPS: '1000000',
    ...env,
  });
  const port = Number(
    String((await bin.waitForLine((l) => l['msg'] === 'api: listening', 'api: listening'))['addr'])
      .split(':')
      .at(-1),
  );
  const origin = `http://127.0.0.1:${port}`;
  const login = (await (
    await fetch(`${origin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'alice-password' }),
    })
  ).json()) as { token: string };
  const auth = `Bearer ${login.token}`;
  let orderId = '';
  for (let i = 0; i < 100; i++) {
    const item = `order ${String(i).padStart(3, '0')} ${'x'.repeat(120)}`;
    const created = (await (
      await fetch(`${origin}/orders`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ item, quantity: i + 1 }),
      })
    ).json()) as { id: string };
    orderId = created.id;
  }
  return {
    bin,
    port,
    origin,
    auth,
    orderId,
    rssMiB: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${bin.child.pid}/status`, 'utf8'))![1]) / 1024,
    stop: async () => void (await bin.stop()),
  };
}

export interface BystanderReport {
  readonly asked: number;
  readonly answered: number;
  readonly failed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * GET /orders/{id} every 100 ms on its own keep-alive connection from 127.0.0.2 (the attacker's
 * address may be rate-limited or capped); each request's latency, a failure counted apart. It runs in
 * a worker thread: an attack written in the same process would otherwise delay its timers and
 * callbacks and be counted as the server's latency.
 */
export function startBystander(target: EdgeTarget): { stop(): Promise<BystanderReport> } {
  const worker = new Worker(BYSTANDER, {
    eval: true,
    workerData: { port: target.port, path: `/orders/${target.orderId}`, auth: target.auth },
  });
  const report = new Promise<{ asked: number; failed: number; latencies: number[] }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    /** Stops asking, and reports once the requests still under way are answered (or time out, 5 s). */
    async stop() {
      worker.postMessage('stop');
      const { asked, failed, latencies } = await report;
      await worker.terminate();
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
      return { asked, answered: latencies.length, failed, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
    },
  };
}

/** The bystander's loop (plain JavaScript: a worker evaluates it as is). */
const BYSTANDER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const latencies = [];
let asked = 0, failed = 0, inFlight = 0, stopping = false;
const ask = () => {
  asked += 1; inFlight += 1;
  const t0 = performance.now();
  const req = http.request({ host: '127.0.0.1', port: workerData.port, path: workerData.path, localAddress: '127.0.0.2', agent, headers: { authorization: workerData.auth }, timeout: 5000 }, (res) => {
    res.resume();
    res.once('end', () => { inFlight -= 1; if (res.statusCode === 200) latencies.push(performance.now() - t0); else failed += 1; done(); });
  });
  req.once('timeout', () => req.destroy());
  req.once('error', () => { inFlight -= 1; failed += 1; done(); });
  req.end();
};
const timer = setInterval(ask, 100);
const done = () => { if (stopping && inFlight === 0) { agent.destroy(); parentPort.postMessage({ asked, failed, latencies }); } };
parentPort.on('message', () => { stopping = true; clearInterval(timer); done(); });
`;

/** The peak of the target's RSS, sampled every 50 ms until stopped. */
export function sampleRss(target: EdgeTarget): { stop(): number } {
  let peak = target.rssMiB();
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, target.rssMiB());
    } catch {
      // the process is gone: its last sample stands
    }
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
