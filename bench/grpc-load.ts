import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { runH2load } from './h2load-load.ts';
import { toLoadResult, type LoadBounds, type LoadResult } from './load-result.ts';

const PROTO = fileURLToPath(new URL('../proto/ordersv1/orders.proto', import.meta.url));

type Unary = (request: object, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, response?: unknown) => void) => void;
type OrdersClient = grpc.Client & { GetOrder: Unary };

function ordersClient(target: string): OrdersClient {
  const definition = protoLoader.loadSync(PROTO, { keepCase: false, longs: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    ordersv1: { Orders: new (target: string, credentials: grpc.ChannelCredentials) => OrdersClient };
  };
  return new loaded.ordersv1.Orders(target, grpc.credentials.createInsecure());
}

/**
 * A closed-loop gRPC load: `concurrency` callers on one channel (one HTTP/2 connection, as a gRPC
 * client normally holds), each issuing its next unary call when the previous one returns. Bounded
 * in time and count like the HTTP runs.
 */
export async function runGrpcGetOrder(port: number, token: string, orderId: string, bounds: LoadBounds): Promise<LoadResult> {
  const client = ordersClient(`127.0.0.1:${port}`);
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  try {
    await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())));
    const call = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const t0 = performance.now();
        client.GetOrder({ id: orderId }, metadata, { deadline: Date.now() + 10_000 }, (error) => (error ? reject(error) : resolve(performance.now() - t0)));
      });
    const latencies: number[] = [];
    let failed = 0;
    let served = 0;
    let started = 0;
    let firstFailure: string | undefined;
    const cpuBefore = process.cpuUsage();
    const begin = performance.now();
    const deadline = begin + bounds.durationMs;
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline && started < bounds.maxRequests) {
        started += 1;
        try {
          const ms = await call();
          served += 1;
          latencies.push(ms);
        } catch (error) {
          served += 1;
          failed += 1;
          firstFailure ??= error instanceof Error ? error.message : String(error);
        }
      }
    };
    await Promise.all(Array.from({ length: bounds.concurrency }, worker));
    const elapsedSeconds = (performance.now() - begin) / 1000;
    return toLoadResult({ latencies, served, failed, firstFailure, elapsedSeconds, cpuBefore });
  } finally {
    client.close();
  }
}

/** h2load for gRPC runs once bench/run.ts found it (pinned to `cpu`); otherwise the grpc-js loop above. */
let h2loadCpu: string | undefined | false = false;

export function useH2loadForGrpc(cpu: string | undefined): void {
  h2loadCpu = cpu;
}

export function grpcGeneratorName(): string {
  return h2loadCpu === false ? 'a @grpc/grpc-js closed loop on one channel in the orchestrator' : `h2load, one connection with ${'`concurrency`'} streams (a gRPC client's one channel)${h2loadCpu === undefined ? '' : `, pinned to CPU ${h2loadCpu}`}`;
}

/** GetOrderRequest {id} (field 1, string) in gRPC's length-prefixed framing: flag 0, big-endian length. */
function getOrderMessage(orderId: string): Buffer {
  const id = Buffer.from(orderId, 'utf8');
  if (id.length > 127) throw new Error('order id too long for a one-byte length');
  const message = Buffer.concat([Buffer.from([0x0a, id.length]), id]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/**
 * The GetOrder load by h2load when available (issue 16: an efficient generator on its own core): one
 * connection with `concurrency` streams. h2load sees HTTP statuses only and a gRPC error is HTTP 200,
 * so a short grpc-js run first must succeed on every call, with the same token and id.
 */
export async function runGrpcLoad(port: number, token: string, orderId: string, bounds: LoadBounds): Promise<LoadResult> {
  if (h2loadCpu === false) return runGrpcGetOrder(port, token, orderId, bounds);
  const probe = await runGrpcGetOrder(port, token, orderId, { concurrency: 1, durationMs: 1_000, maxRequests: 3 });
  if (probe.failed > 0 || probe.ok === 0) throw new Error(`GetOrder probe failed: ${probe.firstFailure ?? 'no answer'}`);
  return runH2load(
    {
      method: 'POST',
      url: `http://127.0.0.1:${port}/ordersv1.Orders/GetOrder`,
      headers: { 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${token}` },
    },
    bounds,
    h2loadCpu,
    { streamsPerConnection: bounds.concurrency, body: getOrderMessage(orderId) },
  );
}
