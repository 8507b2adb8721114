#!/usr/bin/env node
// The gRPC attacks, black-box against `orders-grpc --embedded` in a child process, with the timings
// the tests may not assert: recovery after a 20 s rapid reset from 2 connections, RSS under four
// concurrent gzip bombs, when 100 trickling streams are cut. Loopback only, bounded. Usage:
//   node bench/grpc-peers/attacks.ts [--reset-seconds 20]
import { readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect, constants as h2, type ClientHttp2Session } from 'node:http2';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import { grpcFrame, rawGrpc } from '../../test/grpc/raw-grpc.ts';
import { spawnBin } from '../../test/support/spawn-bin.ts';

const { values } = parseArgs({ options: { 'reset-seconds': { type: 'string', default: '20' } } });
const BIN = fileURLToPath(new URL('../../bin/orders-grpc.ts', import.meta.url));
const bin = spawnBin(BIN, ['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' });
const port = Number(
  String((await bin.waitForLine((line) => line['msg'] === 'api: listening', 'api: listening'))['addr'])
    .split(':')
    .at(-1),
);
const origin = `http://127.0.0.1:${port}`;
const rssMiB = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${bin.child.pid}/status`, 'utf8'))![1]) / 1024;
const login = (await (
  await fetch(`${origin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'alice', password: 'alice-password' }),
  })
).json()) as { token: string };
const auth = `Bearer ${login.token}`;
const order = (await (
  await fetch(`${origin}/orders`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: '{"item":"probe","quantity":1}',
  })
).json()) as { id: string };
const getOrder = grpcFrame(encodeRequest('GetOrder', { id: order.id }));
const normal = async (): Promise<string> => {
  const t0 = performance.now();
  // REST from another loopback address: the attacker's own address is (rightly) rate-limited by now.
  const rest = new Promise<number>((resolve) =>
    httpGet(
      { host: '127.0.0.1', port, path: `/orders/${order.id}`, localAddress: '127.0.0.2', headers: { authorization: auth } },
      (res) => (res.resume(), resolve(res.statusCode ?? 0)),
    ).on('error', () => resolve(-1)),
  );
  const [status, rpc] = await Promise.all([rest, rawGrpc(origin, '/ordersv1.Orders/GetOrder', getOrder, { authorization: auth })]);
  return `REST ${status}, gRPC status ${rpc.grpcStatus}, both answered in ${(performance.now() - t0).toFixed(0)} ms`;
};
const session = (): Promise<ClientHttp2Session> =>
  new Promise((resolve) => {
    const s = connect(origin);
    s.on('error', () => undefined);
    s.once('remoteSettings', () => resolve(s));
  });

console.log(`orders-grpc --embedded on ${origin}, RSS ${rssMiB().toFixed(0)} MiB; normal: ${await normal()}`);
console.log(`SETTINGS_MAX_CONCURRENT_STREAMS: ${await session().then((s) => (s.destroy(), s.remoteSettings.maxConcurrentStreams))}`);

// Rapid reset: 2 connections, each ~900 HEADERS+RST then dropped and reopened, for N seconds.
const resetUntil = Date.now() + Number(values['reset-seconds']) * 1000;
let resets = 0;
let calmed = 0;
const attacker = async (): Promise<void> => {
  while (Date.now() < resetUntil) {
    const s = await session();
    s.once('goaway', (code: number) => code === h2.NGHTTP2_ENHANCE_YOUR_CALM && (calmed += 1));
    for (let i = 0; i < 900 && !s.destroyed && !s.closed; i++) {
      const stream =
        i % 2 === 0
          ? s.request({ ':method': 'POST', ':path': '/ordersv1.Orders/GetOrder', 'content-type': 'application/grpc', authorization: auth })
          : s.request({ ':method': 'GET', ':path': `/orders/${order.id}`, authorization: auth });
      stream.on('error', () => undefined);
      stream.close(h2.NGHTTP2_CANCEL);
      resets += 1;
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
    s.destroy();
  }
};
const rssBeforeReset = rssMiB();
await Promise.all([attacker(), attacker()]);
const rssAfterReset = rssMiB();
console.log(
  `rapid reset ${values['reset-seconds']} s from 2 connections: ${resets} resets, ${calmed} connections got GOAWAY ENHANCE_YOUR_CALM; right after: ${await normal()}; RSS ${rssBeforeReset.toFixed(0)} → ${rssAfterReset.toFixed(0)} MiB`,
);
await new Promise((resolve) => setTimeout(resolve, 5_000));
console.log(`  5 s later: RSS ${rssMiB().toFixed(0)} MiB; ${await normal()}`);

// Four concurrent gzip bombs (~200 KB inflating to 200 MiB), with and without a token.
const bomb = grpcFrame(gzipSync(Buffer.alloc(200 * 1024 * 1024)), true);
const rssBeforeBombs = rssMiB();
let peak = rssBeforeBombs;
const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
const bombs = await Promise.all([
  ...Array.from({ length: 4 }, () => rawGrpc(origin, '/ordersv1.Orders/GetOrder', bomb, { authorization: auth, 'grpc-encoding': 'gzip' })),
  ...Array.from({ length: 4 }, () => rawGrpc(origin, '/ordersv1.Orders/GetOrder', bomb, { 'grpc-encoding': 'gzip' })),
]);
clearInterval(sampler);
console.log(
  `4 gzip bombs of ${(bomb.length / 1024).toFixed(0)} KB with a token + 4 without: statuses ${bombs.map((b) => b.grpcStatus).join(',')}; RSS ${rssBeforeBombs.toFixed(0)} MiB → peak ${peak.toFixed(0)} MiB (+${(peak - rssBeforeBombs).toFixed(0)}); after: ${await normal()}`,
);

// 100 streams trickling 64 bytes every 5 s on one session: when is each cut?
const s = await session();
const opened = Date.now();
const cut = await Promise.all(
  Array.from({ length: 100 }, () => {
    const stream = s.request({
      ':method': 'POST',
      ':path': '/ordersv1.Orders/CreateOrder',
      'content-type': 'application/grpc',
      authorization: auth,
    });
    stream.on('error', () => undefined);
    stream.resume();
    stream.write(Buffer.from([0, 0, 0, 4, 0]));
    const drip = setInterval(() => stream.write(Buffer.alloc(64, 0x61)), 5_000);
    return new Promise<[number | undefined, number]>((resolve) =>
      stream.once('close', () => (clearInterval(drip), resolve([stream.rstCode, Date.now() - opened]))),
    );
  }),
);
s.destroy();
const times = cut.map(([, ms]) => ms);
console.log(
  `100 trickling streams: reset codes ${[...new Set(cut.map(([c]) => c))].join(',')}, cut between ${(Math.min(...times) / 1000).toFixed(1)} s and ${(Math.max(...times) / 1000).toFixed(1)} s; after: ${await normal()}`,
);
bin.child.kill('SIGTERM');
