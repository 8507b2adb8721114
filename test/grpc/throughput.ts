/**
 * A short, bounded comparison on ONE running orders-grpc process: gRPC GetOrder calls/s against REST
 * GET /orders/{id} requests/s on the same port, same user, same order. Not a benchmark suite: one
 * client process, loopback, a few thousand calls.
 *
 *   RATE_LIMIT_RPS=1000000 node bin/orders-grpc.ts --embedded     # terminal 1 (REST is rate limited)
 *   node test/grpc/throughput.ts                                   # terminal 2
 *
 * ADDR (default 127.0.0.1:8080), CALLS (2000), CONCURRENCY (16), ONLY (grpc or rest: one side only,
 * to read the server's CPU time per side from outside).
 */
import { OrdersTestClient, type WireOrder } from './grpc-test-client.ts';

const addr = process.env['ADDR'] ?? '127.0.0.1:8080';
const calls = Number(process.env['CALLS'] ?? 2000);
const concurrency = Number(process.env['CONCURRENCY'] ?? 16);
const only = process.env['ONLY'];

async function run(label: string, total: number, once: () => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await once();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const rate = total / seconds;
  if (label !== '') console.log(`${label}: ${total} calls, concurrency ${concurrency}, ${seconds.toFixed(2)} s, ${rate.toFixed(0)} calls/s`);
  return rate;
}

const client = new OrdersTestClient(addr);
try {
  const token = await client.login('alice', 'alice-password');
  const order = await client.ok<WireOrder>('CreateOrder', { item: 'bench', quantity: 1 }, { token });
  const grpcGet = async (): Promise<void> => {
    await client.ok('GetOrder', { id: order.id }, { token });
  };
  const restGet = async (): Promise<void> => {
    const res = await fetch(`http://${addr}/orders/${order.id}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`REST GET: ${res.status}`);
    await res.arrayBuffer();
  };
  // Warm-up: JIT, connection pools, cache.
  if (only !== 'rest') await run('', 300, grpcGet);
  if (only !== 'grpc') await run('', 300, restGet);
  if (only !== 'rest') await run('gRPC GetOrder (grpc-js, one HTTP/2 connection)', calls, grpcGet);
  if (only !== 'grpc') await run('REST GET /orders/{id} (fetch/undici, HTTP/1.1 keep-alive)', calls, restGet);
} finally {
  client.close();
}
