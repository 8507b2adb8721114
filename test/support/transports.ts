import { fileURLToPath } from 'node:url';
import type { TransportFactory } from '../../src/transports/transport.ts';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { koaTransport } from '../../src/transports/koa/app.ts';
import { stdlibTransport } from '../../src/transports/stdlib/server.ts';

export type TransportName = 'stdlib' | 'koa' | 'grpc';

/** The wires a conformance driver speaks: only the one-port executable speaks h2c and gRPC (spec 4.4). */
export type DriverName = 'rest-http1' | 'rest-h2c' | 'grpc';

/**
 * How a transport's REST side treats an empty login field (spec 2.1, 4.1 rule 9): the standard-library
 * router hands it to the service; a router framework rejects it before the handler.
 */
export type RestVariant = 'stdlib-router' | 'router-framework';

export interface Transport {
  readonly name: TransportName;
  readonly factory: TransportFactory;
  /** The transport's executable (spec 1: each transport is a separate executable). */
  readonly bin: string;
  readonly drivers: readonly DriverName[];
  readonly restVariant: RestVariant;
  /**
   * The transport whose REST handler this one answers REST with, behind a listener of its own: orders-grpc's
   * REST side is orders-stdlib's handler (src/transports/grpc/grpc-transport.ts). On the fake backend its
   * rest-http1 column runs the connection cases only (Case.connection), and its rest-h2c column (the same
   * handler through node:http2) those and one case of every other rule; the handler's every case runs on
   * the other transport's column (the same code, the same HTTP/1.1 server), and every case runs on every
   * column of the real and spawned backends (conformance/runner/describe-matrix.ts, handlerElsewhere).
   */
  readonly restHandlerOf?: TransportName;
}

/** The one registry of transports for tests, conformance and bench. */
export const TRANSPORTS: readonly Transport[] = [
  { name: 'stdlib', factory: stdlibTransport, bin: 'bin/orders-stdlib.ts', drivers: ['rest-http1'], restVariant: 'stdlib-router' },
  { name: 'koa', factory: koaTransport, bin: 'bin/orders-koa.ts', drivers: ['rest-http1'], restVariant: 'router-framework' },
  {
    name: 'grpc',
    factory: grpcTransport,
    bin: 'bin/orders-grpc.ts',
    drivers: ['rest-http1', 'rest-h2c', 'grpc'],
    restVariant: 'stdlib-router',
    restHandlerOf: 'stdlib',
  },
];

export function transportNamed(name: TransportName): Transport {
  const transport = TRANSPORTS.find((t) => t.name === name);
  if (transport === undefined) throw new Error(`unknown transport ${name}`);
  return transport;
}

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
