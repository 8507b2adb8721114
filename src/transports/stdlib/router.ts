import type { Logger } from '../../ports/logger.ts';
import type { TokenService } from '../../service/token-service.ts';
import { authenticate } from '../../service/authenticate.ts';
import type { ProtectedOperation, PublicOperation, RestRequest } from '../http/rest/rest-api.ts';
import { allowHeader, routeLabel, routeMatchesMethod, toColonPattern } from '../http/rest/routes.ts';
import { authorizationHeader, checkHostHeader } from '../http/rest/request-headers.ts';
import { readBody } from '../http/rest/request-body.ts';
import { clientKey } from '../http/rest/client-key.ts';
import { sendError, sendJson, type Exchange, type Handler } from './exchange.ts';
import { respondWithError } from './respond-error.ts';

type Params = Record<string, string | undefined>;
type RouteHandler = (exchange: Exchange, params: Params) => Promise<void>;
/** Never written to: decodeParams builds a fresh object. */
const NO_PARAMS: Params = Object.freeze({});

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  /** A path without parameters: matched by string equality, which is what its pattern tests, minus the regexp run. */
  readonly literal: string | undefined;
  /** The spec's brace form, for the route label of the request's own method (a HEAD on a GET route is `HEAD …`). */
  readonly path: string;
  readonly handler: RouteHandler;
}

/**
 * `/orders/:id` → /^\/orders\/(?<id>[^/]+)$/: a named parameter is one non-empty segment, as in
 * URLPattern's default, and everything else matches literally. Compiled once per route: URLPattern
 * test + exec on every route was ~12% of a GET's CPU (profiled with bench/profile.ts; measured A/B with bench/ab.ts).
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
      const principal = await authenticate(authorizationHeader(exchange.req), this.#tokens);
      const result = await operation(toRestRequest(exchange, params), principal);
      sendJson(exchange.res, result.status, result.body);
    });
  }

  #add(method: string, path: string, handler: RouteHandler): void {
    const colon = toColonPattern(path);
    const literal = colon.split('/').some((segment) => /^:\w+$/.test(segment)) ? undefined : colon;
    this.#routes.push({ method, pattern: compilePath(path), literal, path, handler });
  }

  /** The label of the route `handle` would run, without running it (a throttled request's metrics). */
  routeLabel(method: string, path: string): string | undefined {
    const { route } = this.#match(method, path);
    return route === undefined ? undefined : routeLabel(method, route.path);
  }

  #match(method: string, path: string): { route: Route | undefined; groups: Params; pathMethods: string[] } {
    /** Methods of the routes whose path matched; complete only when no route matched the method too. */
    const pathMethods: string[] = [];
    for (const candidate of this.#routes) {
      let groups: Params = NO_PARAMS;
      if (candidate.literal !== undefined) {
        if (path !== candidate.literal) continue;
      } else {
        const match = candidate.pattern.exec(path);
        if (match === null) continue;
        groups = match.groups ?? NO_PARAMS;
      }
      if (routeMatchesMethod(candidate.method, method)) return { route: candidate, groups, pathMethods };
      pathMethods.push(candidate.method);
    }
    return { route: undefined, groups: {}, pathMethods };
  }

  readonly handle: Handler = async (exchange) => {
    try {
      checkHostHeader(exchange.req);
    } catch (error) {
      respondWithError(exchange, error, this.#logger);
      return;
    }
    const { route, groups, pathMethods } = this.#match(exchange.method, exchange.path);
    if (route === undefined) {
      if (pathMethods.length > 0) {
        sendError(exchange.res, 405, 'method not allowed', { allow: allowHeader(pathMethods) });
      } else {
        sendError(exchange.res, 404, 'not found');
      }
      return;
    }
    exchange.route = routeLabel(exchange.method, route.path);
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
  // for-in, not Object.entries: building the entry arrays doubled the cost of a match's decoding
  // (~0.65 -> ~0.33 µs with the regexp exec, micro-benchmark).
  for (const name in groups) {
    const value = groups[name];
    decoded[name] = value;
    try {
      // Without a `%` there is nothing to decode (the usual id): skip the call (~110 ns a UUID). Its test's
      // `→ false` mutants (always decode) are equivalent, listed in reports/mutation/triage.md, not marked:
      // a disable comment would hide the killed `→ true` (never decode) with them.
      decoded[name] = value === undefined || !value.includes('%') ? value : decodeURIComponent(value);
    } catch {
      // A malformed escape: the value stays as it is, and fails validation.
    }
  }
  return decoded;
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
