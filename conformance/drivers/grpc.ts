import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';
import { adminProbe } from './rest-reply.ts';
import { operations, type Driver, type DriverOptions, type Reply, type RpcMethod } from './driver.ts';

export const PROTO_PATH = fileURLToPath(new URL('../../proto/ordersv1/orders.proto', import.meta.url));
/** Every call's deadline: a hang guard, generous for a loaded machine; no case measures it. */
const DEADLINE_MS = HANG_GUARD_MS;

/**
 * An independent gRPC client (@grpc/grpc-js + @grpc/proto-loader over the .proto, not the service's
 * generated code), so a mistake shared by server and generated stubs cannot hide.
 */
export const ORDERS_PROTO = protoLoader.loadSync(PROTO_PATH, {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
});
const SERVICE = ORDERS_PROTO['ordersv1.Orders'] as protoLoader.ServiceDefinition;

/** Name of a numeric status code, e.g. 16 → UNAUTHENTICATED. */
export function grpcCodeName(code: number): string {
  return (grpc.status as unknown as Record<number, string>)[code] ?? `CODE_${code}`;
}

/** Encodes a request message of one of our methods, for raw calls to other method names. */
export function encodeRequest(method: RpcMethod, value: Record<string, unknown>): Uint8Array {
  return (SERVICE[method] as protoLoader.MethodDefinition<object, object>).requestSerialize(value);
}

interface Timestamp {
  readonly seconds: number;
  readonly nanos: number;
}

/** Message → the REST JSON shape: created_at as RFC 3339, like the HTTP wire (spec 2.1). */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key === 'created_at' && field !== null && typeof field === 'object') {
      const ts = field as Timestamp;
      out[key] = new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)).toISOString();
    } else {
      out[key] = normalise(field);
    }
  }
  return out;
}

export function grpcDriver(options: DriverOptions): Driver {
  const address = new URL(options.baseUrl).host;
  const client = new grpc.Client(address, grpc.credentials.createInsecure());

  const call = (
    path: string,
    serialize: (value: never) => Buffer,
    deserialize: (bytes: Buffer) => unknown,
    message: unknown,
    headers: Readonly<Record<string, string>>,
  ): Promise<Reply> =>
    new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
      client.makeUnaryRequest(
        path,
        serialize,
        deserialize,
        message as never,
        metadata,
        { deadline: Date.now() + DEADLINE_MS },
        (error, response) => {
          if (error) {
            resolve({ api: 'grpc', code: error.code, codeName: grpcCodeName(error.code), message: error.details, body: undefined });
          } else {
            resolve({ api: 'grpc', code: grpc.status.OK, codeName: 'OK', message: '', body: normalise(response) });
          }
        },
      );
    });

  return {
    name: 'grpc',
    api: 'grpc',
    // Each operation's gRPC call from driver.ts OPERATIONS, through the method's definition in the .proto.
    ...operations((forms) => {
      const { method, message, metadata } = forms.grpc();
      const def = SERVICE[method] as protoLoader.MethodDefinition<object, object>;
      return call(def.path, def.requestSerialize as (value: never) => Buffer, def.responseDeserialize, message, metadata);
    }),
    rawRpc: (fullMethod, message, auth) =>
      call(
        fullMethod,
        ((bytes: Uint8Array) => Buffer.from(bytes)) as (value: never) => Buffer,
        (bytes) => bytes,
        message,
        auth === null || auth === undefined ? {} : { authorization: auth },
      ),
    admin: options.adminUrl === undefined ? undefined : adminProbe(options.adminUrl),
    hooks: options.hooks,
    async close() {
      client.close();
    },
  };
}
