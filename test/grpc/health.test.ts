import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/lifecycle/checker.ts';
import { createHealthMethods } from '../../src/transports/grpc/health-service.ts';
import { createOnePortServer, type OnePortServer } from '../../src/transports/grpc/one-port-server.ts';
import { createUnaryServer } from '../../src/transports/grpc/unary-server/unary-server.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';
import { listenLocal } from '../support/ports.ts';

const HEALTH_PROTO = join(import.meta.dirname, '..', '..', 'proto', 'grpc', 'health', 'v1', 'health.proto');
type Reply = { status: string };
type HealthClient = grpc.Client & {
  Check(req: { service: string }, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r?: Reply) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<Reply>;
};

function healthClient(address: string): HealthClient {
  const definition = protoLoader.loadSync(HEALTH_PROTO, { enums: String, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as { grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } } };
  return new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
}

/**
 * grpc.health.v1 through @grpc/grpc-js with the .proto loaded at run time (rule GRPC-health): Watch, and
 * Check following a switchable report. Check on the real public port, its NOT_FOUND for another name and
 * its agreement with /readyz are conformance/cases/one-port-attacks.ts (grpc-health-check-…).
 */
describe('health follows the readiness report (a switchable report behind the same server)', () => {
  let front: OnePortServer;
  let clean = false;
  let client: HealthClient;
  let port: number;
  beforeAll(async () => {
    const readiness = async (): Promise<HealthReport> => ({ clean, nodes: [{ name: 'api', status: clean ? 'ok' : 'unavailable' }] });
    const grpcHandler = createUnaryServer({ methods: createHealthMethods(readiness, 20), authenticate: () => undefined, toStatus: () => ({ code: 13, message: 'internal server error' }) });
    front = createOnePortServer({ grpc: grpcHandler, rest: (_req, res) => res.end() });
    port = await listenLocal(front.server);
    client = healthClient(`127.0.0.1:${port}`);
  });
  afterAll(async () => {
    client?.close();
    await front?.shutdown();
  });

  it('Check is NOT_SERVING while the report is not clean, SERVING once it is; Watch sends each change', async () => {
    const check = (): Promise<string> => new Promise((resolve) => client.Check({ service: '' }, new grpc.Metadata(), (e, r) => resolve(e === null ? r!.status : String(e.code))));
    expect(await check()).toBe('NOT_SERVING');
    const call = client.Watch({ service: 'ordersv1.Orders' });
    call.on('error', () => undefined);
    const seen: string[] = [];
    const twoSeen = new Promise<void>((resolve) =>
      call.on('data', (reply: Reply) => {
        seen.push(reply.status);
        if (seen.length === 1) clean = true;
        if (seen.length === 2) resolve();
      }),
    );
    await twoSeen;
    call.cancel();
    expect(seen).toEqual(['NOT_SERVING', 'SERVING']);
    expect(await check()).toBe('SERVING');
  });

  it('Watch sends the current status at once, and SERVICE_UNKNOWN for an unknown name; cancelling ends it', async () => {
    for (const [service, expected] of [['', 'SERVING'], ['nope.Nope', 'SERVICE_UNKNOWN']] as const) {
      const call = client.Watch({ service });
      const first = await new Promise<string>((resolve, reject) => {
        call.once('data', (reply: Reply) => resolve(reply.status));
        call.once('error', reject);
      });
      expect(first, service).toBe(expected);
      const ended = new Promise<string>((resolve) => call.once('error', (e: grpc.ServiceError) => resolve(grpc.status[e.code])));
      call.cancel();
      expect(await ended).toBe('CANCELLED');
    }
  });

  it('a server stream past its grpc-timeout: Watch with 200m sends its first message, then ends DEADLINE_EXCEEDED in the trailers', async () => {
    clean = true;
    const reply = await rawGrpc(`http://127.0.0.1:${port}`, '/grpc.health.v1.Health/Watch', grpcFrame(new Uint8Array()), { 'grpc-timeout': '200m' });
    expect([reply.grpcStatus, reply.grpcMessage]).toEqual(['4', 'deadline exceeded']);
    expect([...reply.body]).toEqual([0, 0, 0, 0, 2, 0x08, 0x01]); // one message: SERVING
  });
});
