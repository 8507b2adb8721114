/**
 * What a conformance case talks to: the Driver interface, and the table of business operations
 * (OPERATIONS) every driver builds its methods from, so an operation is described once for every wire.
 */
import type { InProcessApp } from '../../test/support/in-process-app.ts';

import type { DriverName } from '../../test/support/transports.ts';

export type { DriverName };
export type Api = 'rest' | 'grpc';

/**
 * What came back, whatever the wire. REST replies fill status/headers/text; gRPC replies fill
 * code/codeName/message. `body` is the parsed JSON (REST) or the response message normalised to the
 * same JSON shape (gRPC: snake_case fields, created_at as an RFC 3339 string), so one expectation can
 * check both.
 */
export interface Reply {
  readonly api: Api;
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly text?: string;
  readonly httpVersion?: string;
  readonly code?: number;
  readonly codeName?: string;
  readonly message?: string;
  readonly body: unknown;
}

/** A request on the public listener, for malformed input no operation can express (REST drivers only). */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Bind the client socket to this local address (rate limiter keying). HTTP/1.1 only. */
  readonly localAddress?: string;
}

export interface ListQuery {
  readonly limit?: number | string;
  readonly offset?: number | string;
}

/** The admin listener, probed over HTTP/1.1 whatever the driver. */
export interface AdminProbe {
  livez(): Promise<Reply>;
  healthz(): Promise<Reply>;
  readyz(): Promise<Reply>;
  metrics(): Promise<Reply>;
  get(path: string): Promise<Reply>;
}

/** A unary call of ordersv1.Orders: the method's name in the .proto, its request message, its metadata. */
export interface RpcCall<M extends string = string> {
  readonly method: M;
  readonly message: Readonly<Record<string, unknown>>;
  readonly metadata: Readonly<Record<string, string>>;
}

/** One operation on each wire, built only when that wire sends it (a REST-only query has no int32 form). */
export interface WireForms {
  readonly rest: () => RawRequest;
  readonly grpc: () => RpcCall;
}

/** `auth` is the raw Authorization header (REST) or `authorization` metadata value (gRPC); null sends none. */
const authorization = (auth: string | null): Record<string, string> => (auth === null ? {} : { authorization: auth });
const get = (path: string, auth: string | null): RawRequest => ({ method: 'GET', path, headers: authorization(auth) });
const post = (path: string, body: unknown, headers: Record<string, string>): RawRequest => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const rpc = <M extends string>(method: M, message: Record<string, unknown>, metadata: Record<string, string>): RpcCall<M> => ({
  method,
  message,
  metadata,
});

/** A list query value as int32 for gRPC; text that no int32 can carry is a REST-only case. */
function toInt(value: number | string | undefined, name: string): number {
  if (value === undefined) return 0;
  const n = typeof value === 'number' ? value : /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw new Error(`grpc driver: ${name}=${String(value)} cannot be sent as int32`);
  return n;
}

/**
 * The business operations of every driver, once: each one's REST request and gRPC call. A new operation
 * is one entry here; the REST drivers (rest-operations.ts) and the gRPC driver (grpc.ts) build their
 * methods from this table, and Driver's signatures follow from it.
 */
export const OPERATIONS = {
  login: (input: { readonly username: unknown; readonly password: unknown }) => ({
    rest: () => post('/auth/login', input, {}),
    grpc: () => rpc('Login', { username: input.username, password: input.password }, {}),
  }),
  /** `idempotencyKey`: the Idempotency-Key header (REST) or `idempotency-key` metadata (gRPC), sent as given. */
  createOrder: (auth: string | null, input: Readonly<Record<string, unknown>>, options?: { readonly idempotencyKey?: string }) => {
    const headers = {
      ...authorization(auth),
      ...(options?.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
    };
    return {
      rest: () => post('/orders', input, headers),
      grpc: () => rpc('CreateOrder', { item: input['item'], quantity: input['quantity'] }, headers),
    };
  },
  getOrder: (auth: string | null, id: string) => ({
    rest: () => get(`/orders/${encodeURIComponent(id)}`, auth),
    grpc: () => rpc('GetOrder', { id }, authorization(auth)),
  }),
  listOrders: (auth: string | null, query: ListQuery) => ({
    rest: () => {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.offset !== undefined) params.set('offset', String(query.offset));
      return get(params.size > 0 ? `/orders?${params.toString()}` : '/orders', auth);
    },
    grpc: () => rpc('ListOrders', { limit: toInt(query.limit, 'limit'), offset: toInt(query.offset, 'offset') }, authorization(auth)),
  }),
  recent: (auth: string | null) => ({
    rest: () => get('/me/recent', auth),
    grpc: () => rpc('Recent', {}, authorization(auth)),
  }),
} satisfies Record<string, (...args: never[]) => WireForms>;

type OperationName = keyof typeof OPERATIONS;

/** A method per operation of OPERATIONS, with that operation's parameters. */
export type Operations = { readonly [K in OperationName]: (...args: Parameters<(typeof OPERATIONS)[K]>) => Promise<Reply> };

/** The ordersv1.Orders methods the table calls (Login, CreateOrder, …). */
export type RpcMethod = ReturnType<ReturnType<(typeof OPERATIONS)[OperationName]>['grpc']>['method'];

/** The driver's methods: each operation in its wire's form, sent by `send`. */
export function operations(send: (forms: WireForms) => Promise<Reply>): Operations {
  const build =
    (describe: (...args: never[]) => WireForms) =>
    (...args: never[]) =>
      send(describe(...args));
  return Object.fromEntries(Object.entries(OPERATIONS).map(([name, describe]) => [name, build(describe)])) as Operations;
}

/** The ONE interface every case runs through: the operations of OPERATIONS and a few probes. No case knows which driver runs it. */
export interface Driver extends Operations {
  readonly name: DriverName;
  readonly api: Api;
  /** REST drivers: any request on the public listener. */
  raw?(request: RawRequest): Promise<Reply>;
  /** gRPC driver: a unary call to any full method name with an already encoded message. */
  rawRpc?(fullMethod: string, message: Uint8Array, auth?: string | null): Promise<Reply>;
  readonly admin: AdminProbe | undefined;
  /** The in-process target's hooks (logs, spans, fakes, app) when the target runs in this process. */
  readonly hooks: InProcessApp | undefined;
  close(): Promise<void>;
}

export interface DriverOptions {
  readonly baseUrl: string;
  readonly adminUrl: string | undefined;
  readonly hooks: InProcessApp | undefined;
  /** Sees every REST exchange (the runner checks observed statuses against the OpenAPI document). */
  readonly observe?: (request: RawRequest, reply: Reply) => void;
  /**
   * External targets run with their own RATE_LIMIT_RPS: a 429 is retried after its Retry-After instead
   * of failing an unrelated case (the rate-limit cases themselves need in-process settings).
   */
  readonly retryRateLimited?: boolean;
}

export const PROTECTED_AUTH_DEFAULT = 'Bearer {token}';
