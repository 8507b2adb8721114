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
  readonly pattern: RegExp;
  readonly label: string;
  readonly handler: RouteHandler;
}

/**
 * `/orders/:id` → /^\/orders\/(?<id>[^/]+)$/: a named parameter is one non-empty segment, as in
 * URLPattern's default, and everything else matches literally. Compiled once per route: URLPattern
 * test + exec on every route was ~12% of a GET's CPU (bench/proposed/router-regexp.patch).
 */
export function compilePath(path: string): RegExp {
  const source = toColonPattern(path)
    .split('/')
    .map((segment) => (/^:\w+$/.test(segment) ? `(?<${segment.slice(1)}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('\\/');
  return new RegExp(`^${source}$`);
}

/**
 * A small router on compiled path patterns. Business routes are registered through `public` or
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
    this.#routes.push({ method, pattern: compilePath(path), label: routeLabel(method, path), handler });
  }

  readonly handle: Handler = async (exchange) => {
    let route: Route | undefined;
    let groups: Params = {};
    /** Methods of the routes whose path matched; complete only when no route matched the method too. */
    const pathMethods: string[] = [];
    for (const candidate of this.#routes) {
      const match = candidate.pattern.exec(exchange.path);
      if (match === null) continue;
      if (candidate.method === exchange.method) {
        route = candidate;
        groups = match.groups ?? {};
        break;
      }
      pathMethods.push(candidate.method);
    }
    if (route === undefined) {
      if (pathMethods.length > 0) {
        sendError(exchange.res, 405, 'method not allowed', { allow: [...new Set(pathMethods)].join(', ') });
      } else {
        sendError(exchange.res, 404, 'not found');
      }
      return;
    }
    exchange.route = route.label;
    const params = decodeParams(groups);
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
