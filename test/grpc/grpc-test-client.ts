/**
 * An independent gRPC client for the tests: @grpc/grpc-js with the .proto loaded at run time by
 * @grpc/proto-loader, so nothing of the server's generated code or of Connect is on this side.
 */
import { join } from 'node:path';
import { credentials, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROTO_PATH = join(import.meta.dirname, '..', '..', 'proto', 'ordersv1', 'orders.proto');

export interface WireTimestamp {
  readonly seconds: string;
  readonly nanos: number;
}
export interface WireOrder {
  readonly id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: WireTimestamp | null;
}

export type Method = 'Login' | 'CreateOrder' | 'GetOrder' | 'ListOrders' | 'Recent';

export type CallResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ServiceError };

type UnaryFn = (request: object, metadata: Metadata, options: grpc.CallOptions, callback: (error: ServiceError | null, value?: unknown) => void) => void;

const packageDefinition = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as { ordersv1: { Orders: new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => Client } };

export class OrdersTestClient {
  readonly client: Client;

  constructor(address: string, channelCredentials: grpc.ChannelCredentials = credentials.createInsecure()) {
    this.client = new loaded.ordersv1.Orders(address, channelCredentials);
  }

  /** One unary call; `token` becomes `authorization: Bearer <token>` unless `authorization` is given raw. */
  call<T>(method: Method, request: object, auth: { token?: string; authorization?: string } = {}, deadlineMs = 10_000): Promise<CallResult<T>> {
    const metadata = new Metadata();
    const authorization = auth.authorization ?? (auth.token === undefined ? undefined : `Bearer ${auth.token}`);
    if (authorization !== undefined) metadata.set('authorization', authorization);
    const fn = (this.client as unknown as Record<Method, UnaryFn>)[method].bind(this.client);
    return new Promise((resolve) => {
      fn(request, metadata, { deadline: Date.now() + deadlineMs }, (error, value) => {
        resolve(error === null ? { ok: true, value: value as T } : { ok: false, error });
      });
    });
  }

  async ok<T>(method: Method, request: object, auth: { token?: string; authorization?: string } = {}): Promise<T> {
    const result = await this.call<T>(method, request, auth);
    if (!result.ok) throw new Error(`${method} failed: ${result.error.code} ${result.error.details}`);
    return result.value;
  }

  async login(username: string, password: string): Promise<string> {
    return (await this.ok<{ token: string }>('Login', { username, password })).token;
  }

  /** A call to a path this client's service does not declare, with raw bytes (reflection, say). */
  rawCall(path: string, payload: Buffer = Buffer.alloc(0)): Promise<CallResult<Buffer>> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        path,
        (value: Buffer) => value,
        (value: Buffer) => value,
        payload,
        new Metadata(),
        { deadline: Date.now() + 10_000 },
        (error, value) => resolve(error === null ? { ok: true, value: value as Buffer } : { ok: false, error }),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

export { grpc };

export function timestampToDate(ts: WireTimestamp): Date {
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
}
