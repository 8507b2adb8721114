/**
 * orders-stdlib's router: the spec's route table (http/rest/routes.ts) dispatched on node:http. A route is
 * registered as public, protected or raw, so authentication is a property of where a route is registered
 * (spec 4.1 rule 1). It checks Host first (rule HTTP-host-header), answers 404 and 405 itself, and answers
 * a handler's error from the one error table.
 */
import type { Logger } from '../../ports/logger.ts';
import { authenticate } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import type { ProtectedOperation, PublicOperation, RestRequest } from '../http/rest/api.ts';
import { authorizationHeader, checkHostHeader, clientKey, readBody } from '../http/rest/request.ts';
import { allowHeader, routeLabel, RouteTable } from '../http/rest/routes.ts';
import { respondWithError, sendError, sendJson, type Exchange, type Handler } from './middleware.ts';

type Params = Readonly<Record<string, string>>;

interface Route {
  readonly method: string;
  /** The spec's brace form: the label, with the request's own method (a HEAD on a GET route is `HEAD …`). */
  readonly path: string;
  readonly handler: (exchange: Exchange, params: Params) => Promise<void>;
}

export class Router {
  readonly #routes = new RouteTable<Route>();
  readonly #tokens: TokenService;
  readonly #logger: Logger;

  constructor(tokens: TokenService, logger: Logger) {
    this.#tokens = tokens;
    this.#logger = logger;
  }

  /** Raw route (contract documents): no JSON body, no authentication. */
  raw(method: string, path: string, handler: (exchange: Exchange) => void): void {
    this.#routes.add({ method, path, handler: async (exchange) => handler(exchange) });
  }

  public(method: string, path: string, operation: PublicOperation): void {
    this.#routes.add({
      method,
      path,
      handler: async (exchange, params) => {
        const result = await operation(toRestRequest(exchange, params));
        sendJson(exchange.res, result.status, result.body);
      },
    });
  }

  /** The shared authentication step (spec 5 rule 6) runs before the operation, and only on a matched route. */
  protected(method: string, path: string, operation: ProtectedOperation): void {
    this.#routes.add({
      method,
      path,
      handler: async (exchange, params) => {
        const principal = await authenticate(authorizationHeader(exchange.req), this.#tokens);
        const result = await operation(toRestRequest(exchange, params), principal);
        sendJson(exchange.res, result.status, result.body);
      },
    });
  }

  /** The label of the route `handle` would run, without running it (a refused request's metrics). */
  routeLabel(method: string, path: string): string | undefined {
    return this.#routes.label(method, path);
  }

  readonly handle: Handler = async (exchange) => {
    try {
      checkHostHeader(exchange.req);
    } catch (error) {
      respondWithError(exchange, error, this.#logger);
      return;
    }
    const match = this.#routes.match(exchange.method, exchange.path);
    if (match.route === undefined) {
      if (match.allowed.length > 0) sendError(exchange.res, 405, 'method not allowed', { allow: allowHeader(match.allowed) });
      else sendError(exchange.res, 404, 'not found');
      return;
    }
    exchange.route = routeLabel(exchange.method, match.route.path);
    try {
      await match.route.handler(exchange, decodeParams(match.params));
    } catch (error) {
      respondWithError(exchange, error, this.#logger);
    }
  };
}

/** Path parameters arrive percent-encoded; decoded as @koa/router does, so both transports see the same id. */
function decodeParams(params: Params): Params {
  return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, decodeOrKeep(value)]));
}

/** A malformed escape is left as it is, and fails validation. */
function decodeOrKeep(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function toRestRequest(exchange: Exchange, params: Params): RestRequest {
  return {
    params,
    query: exchange.query,
    signal: exchange.signal,
    readBody: () => readBody(exchange.req),
    headers: exchange.req.headers,
    client: clientKey(exchange.req),
  };
}
