import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { TokenService } from '../../service/token-service.ts';
import type { HttpObservability } from '../http/http-observability.ts';
import { OPENAPI_YAML } from '../http/openapi-document.ts';
import type { TokenBucketLimiter } from '../http/rate-limiter.ts';
import type { RestApi } from '../http/rest-api.ts';
import { OPENAPI_PATH, PROTECTED_ROUTES, PUBLIC_ROUTES, SWAGGER_PATH } from '../http/routes.ts';
import { SWAGGER_PAGE_HTML } from '../http/swagger-page.ts';
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../http/server-timeouts.ts';
import type { Exchange, Handler, Middleware } from './exchange.ts';
import { metrics, rateLimiting, recovery, requestLogging, tracing } from './middleware.ts';
import { Router } from './router.ts';
import { REQUEST_ENDED } from '../http/request-ended.ts';

export interface StdlibDeps {
  readonly api: RestApi;
  readonly tokens: TokenService;
  readonly observability: HttpObservability;
  readonly limiter: TokenBucketLimiter;
}


export function createStdlibRouter(deps: Pick<StdlibDeps, 'api' | 'tokens' | 'observability'>): Router {
  const router = new Router(deps.tokens, deps.observability.logger);
  for (const route of PUBLIC_ROUTES) router.public(route.method, route.path, deps.api[route.operation]);
  for (const route of PROTECTED_ROUTES) router.protected(route.method, route.path, deps.api[route.operation]);
  router.raw('GET', OPENAPI_PATH, ({ res }) => void res.writeHead(200, { 'content-type': 'application/yaml' }).end(OPENAPI_YAML));
  router.raw('GET', SWAGGER_PATH, ({ res }) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SWAGGER_PAGE_HTML));
  return router;
}

/** Spec 4.3 ordering, outermost first: recovery, tracing, metrics, request logging, rate limiter, router. */
export function createStdlibHandler(deps: StdlibDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { observability } = deps;
  const chain: Middleware[] = [
    recovery(observability.logger),
    tracing(observability),
    metrics(observability),
    requestLogging(observability.logger),
    rateLimiting(deps.limiter),
  ];
  const handler: Handler = chain.reduceRight<Handler>((next, layer) => layer(next), createStdlibRouter(deps).handle);
  return (req, res) => {
    const target = req.url ?? '/';
    const url = parseTarget(target);
    const done = new AbortController();
    res.once('close', () => done.abort(REQUEST_ENDED));
    const exchange: Exchange = {
      req,
      res,
      method: req.method ?? 'GET',
      path: url?.pathname ?? target,
      query: url?.searchParams ?? new URLSearchParams(),
      signal: done.signal,
      route: undefined,
    };
    void handler(exchange);
  };
}

/**
 * Origin-form (`/path?query`) is a path even when it begins with `//` (not a host, as `new URL('//x/orders',
 * base)` would read it). A target that is no valid URL (`GET http://[ HTTP/1.1`) must not throw out of
 * the request listener, where an uncaught exception ends the process: it goes down the chain as a path
 * that matches no route.
 */
function parseTarget(target: string): URL | undefined {
  const text = target.startsWith('/') ? `http://public${target}` : target;
  return URL.canParse(text) ? new URL(text) : undefined;
}

export function createStdlibServer(deps: StdlibDeps): Server {
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS },
    createStdlibHandler(deps),
  );
  return server;
}
