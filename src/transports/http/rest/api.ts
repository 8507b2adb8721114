/**
 * The REST API of spec 4.1, framework-neutral: each operation parses what a transport hands it, calls the
 * core service and shapes the result, and the route table names the method and path that serve it;
 * stdlib/ and koa/ register every row and write the answer. Also what every REST transport is built
 * from (RestParts).
 */
import { ClientAddressResolver } from '../../../rate-limit/client-address.ts';
import { HttpRateLimiter } from '../../../rate-limit/limiter.ts';
import type { AuthService } from '../../../service/auth-service.ts';
import type { Principal } from '../../../service/authenticate.ts';
import type { OrderService } from '../../../service/order-service.ts';
import type { TokenService } from '../../../service/token-service.ts';
import type { Core } from '../../transport.ts';
import { decodeCreateOrderRequest, decodeLoginRequest, queryInteger, toOrderDto } from './dto.ts';
import type { HttpObservability } from './observability.ts';
import type { Method } from './routes.ts';

/** What every HTTP transport hands an operation, whatever its framework. */
export interface RestRequest {
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly query: URLSearchParams;
  readonly readBody: () => Promise<string>;
  /** The caller's key for the core's fair login gate (rule LOGIN-gate-fair). */
  readonly client: string;
  /** Aborts when the request ends (spec 3.2 rule 2). */
  readonly signal: AbortSignal;
  /** Names lower-cased, as node:http gives them. */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
}

export interface RestResult {
  readonly status: number;
  readonly body: unknown;
}

export type PublicOperation = (req: RestRequest) => Promise<RestResult>;
export type ProtectedOperation = (req: RestRequest, principal: Principal) => Promise<RestResult>;

/** The operations of spec 4.1; errors are thrown, for the one error table (errors/table.ts). */
export class RestApi {
  readonly #auth: AuthService;
  readonly #orders: OrderService;

  constructor(auth: AuthService, orders: OrderService) {
    this.#auth = auth;
    this.#orders = orders;
  }

  readonly login: PublicOperation = async (req) => {
    const { username, password } = decodeLoginRequest(await req.readBody());
    return { status: 200, body: { token: await this.#auth.login(username, password, req.client, req.signal) } };
  };

  readonly createOrder: ProtectedOperation = async (req, principal) => {
    const { item, quantity } = decodeCreateOrderRequest(await req.readBody());
    // Idempotency-Key is a single Item: a repeated one is passed on joined, and fails the key's parse (400).
    const key = req.headers?.['idempotency-key'];
    const idempotencyKey = Array.isArray(key) ? key.join(', ') : key;
    const order = await this.#orders.create({ principal, signal: req.signal }, item, quantity, { idempotencyKey });
    return { status: 201, body: toOrderDto(order) };
  };

  readonly getOrder: ProtectedOperation = async (req, principal) => {
    const { id = '' } = req.params;
    const order = await this.#orders.get({ principal, signal: req.signal }, id);
    return { status: 200, body: toOrderDto(order) };
  };

  readonly listOrders: ProtectedOperation = async (req, principal) => {
    const limit = queryInteger(req.query.get('limit'));
    const offset = queryInteger(req.query.get('offset'));
    const orders = await this.#orders.list({ principal, signal: req.signal }, limit, offset);
    return { status: 200, body: { orders: orders.map(toOrderDto) } };
  };

  readonly recent: ProtectedOperation = async (req, principal) => {
    return { status: 200, body: { recent: this.#orders.recent({ principal, signal: req.signal }) } };
  };
}

export interface RouteDef {
  readonly method: Method;
  /** The spec's brace form (`/orders/{id}`), also the metrics/span route label (spec 4.5). */
  readonly path: string;
  /** The RestApi member that serves the route (each public member of RestApi is an operation). */
  readonly operation: keyof RestApi;
}

/** Publishing a route unauthenticated is an explicit edit here, never an omission (spec 4.1 rule 1). */
export const PUBLIC_ROUTES = [{ method: 'POST', path: '/auth/login', operation: 'login' }] as const satisfies readonly RouteDef[];

/** Every other route: both routers authenticate the caller before the operation runs. */
export const PROTECTED_ROUTES = [
  { method: 'POST', path: '/orders', operation: 'createOrder' },
  { method: 'GET', path: '/orders/{id}', operation: 'getOrder' },
  { method: 'GET', path: '/orders', operation: 'listOrders' },
  { method: 'GET', path: '/me/recent', operation: 'recent' },
] as const satisfies readonly RouteDef[];

/** What every REST transport is built from. */
export interface RestParts {
  readonly api: RestApi;
  readonly tokens: TokenService;
  readonly observability: HttpObservability;
  /** The one REST rate limiter, keyed per client (rule LIMIT-rate-keying) over the core's buckets. */
  readonly limiter: HttpRateLimiter;
}

export function restParts(core: Core): RestParts {
  return {
    api: new RestApi(core.auth, core.orders),
    tokens: core.tokens,
    observability: { tracer: core.tracer, metrics: core.metrics, logger: core.logger },
    limiter: new HttpRateLimiter({
      resolver: new ClientAddressResolver(core.config.trustProxy),
      local: core.rateLimits.local,
      shared: core.rateLimits.shared,
      logger: core.logger,
    }),
  };
}
