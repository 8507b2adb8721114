import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
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
