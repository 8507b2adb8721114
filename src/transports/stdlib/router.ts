import type { Logger } from '../../observability/logger.ts';
import type { TokenService } from '../../service/token-service.ts';
import { authenticate } from '../../service/authenticate.ts';
import type { ProtectedOperation, PublicOperation, RestRequest } from '../http/rest-api.ts';
import { routeLabel, toColonPattern } from '../http/routes.ts';
import { readBody } from '../http/request-body.ts';
import { sendError, sendJson, type Exchange, type Handler } from './exchange.ts';
import { respondWithError } from './respond-error.ts';

type Params = Record<string, string | undefined>;
type RouteHandler = (exchange: Exchange, params: Params) => Promise<void>;

interface Route {
  readonly method: string;
  readonly pattern: URLPattern;
  readonly label: string;
  readonly handler: RouteHandler;
}

/**
 * A small router on the platform's URLPattern. Business routes are registered through `public` or
 * `protected`: authentication is a property of where a route is registered (spec 4.1 rule 1).
 */
export class Router {
  readonly #routes: Route[] = [];
  readonly #tokens: TokenService;
  readonly #logger: Logger;

  constructor(tokens: TokenService, logger: Logger) {
    this.#tokens = tokens;
    this.#logger = logger;
  }

  /** Raw route (contract documents): no JSON body parsing, no authentication. */
  raw(method: string, path: string, handler: (exchange: Exchange) => Promise<void> | void): void {
    this.#add(method, path, async (exchange) => handler(exchange));
  }

  public(method: string, path: string, operation: PublicOperation): void {
    this.#add(method, path, async (exchange, params) => {
      const result = await operation(toRestRequest(exchange, params));
      sendJson(exchange.res, result.status, result.body);
    });
  }

  protected(method: string, path: string, operation: ProtectedOperation): void {
    this.#add(method, path, async (exchange, params) => {
      const principal = await authenticate(exchange.req.headers.authorization, this.#tokens);
      const result = await operation(toRestRequest(exchange, params), principal);
      sendJson(exchange.res, result.status, result.body);
    });
  }

  #add(method: string, path: string, handler: RouteHandler): void {
    this.#routes.push({ method, pattern: new URLPattern({ pathname: toColonPattern(path) }), label: routeLabel(method, path), handler });
  }

  readonly handle: Handler = async (exchange) => {
    const matching = this.#routes.filter((r) => r.pattern.test({ pathname: exchange.path }));
    const route = matching.find((r) => r.method === exchange.method);
    if (route === undefined) {
      if (matching.length > 0) {
        sendError(exchange.res, 405, 'method not allowed', { allow: [...new Set(matching.map((r) => r.method))].join(', ') });
      } else {
        sendError(exchange.res, 404, 'not found');
      }
      return;
    }
    exchange.route = route.label;
    const params = decodeParams(route.pattern.exec({ pathname: exchange.path })?.pathname.groups ?? {});
    try {
      await route.handler(exchange, params);
    } catch (error) {
      respondWithError(exchange, error, this.#logger);
    }
  };
}

/** Path parameters arrive percent-encoded; decode them as @koa/router does, so both transports see the same id. */
function decodeParams(groups: Params): Params {
  const decoded: Params = {};
  for (const [name, value] of Object.entries(groups)) {
    try {
      decoded[name] = value === undefined ? undefined : decodeURIComponent(value);
    } catch {
      decoded[name] = value; // malformed escapes stay as they are and fail validation
    }
  }
  return decoded;
}

function toRestRequest(exchange: Exchange, params: Params): RestRequest {
  return { params, query: exchange.query, signal: exchange.signal, readBody: () => readBody(exchange.req) };
}
