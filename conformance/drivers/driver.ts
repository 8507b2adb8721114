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

/**
 * The ONE interface every case runs through. `auth` is the raw Authorization header (REST) or
 * `authorization` metadata value (gRPC); null sends none. No case knows which driver runs it.
 */
export interface Driver {
  readonly name: DriverName;
  readonly api: Api;
  login(input: { readonly username: unknown; readonly password: unknown }): Promise<Reply>;
  /** `idempotencyKey`: the Idempotency-Key header (REST) or `idempotency-key` metadata (gRPC), sent as given. */
  createOrder(
    auth: string | null,
    input: Readonly<Record<string, unknown>>,
    options?: { readonly idempotencyKey?: string },
  ): Promise<Reply>;
  getOrder(auth: string | null, id: string): Promise<Reply>;
  listOrders(auth: string | null, query: ListQuery): Promise<Reply>;
  recent(auth: string | null): Promise<Reply>;
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
