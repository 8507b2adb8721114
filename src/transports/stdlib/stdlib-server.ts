import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import type { RestParts } from '../http/rest/rest-parts.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES } from '../http/rest/routes.ts';
import { createHttp1Server, type Http1Settings } from '../http/server/http1-server.ts';
import type { Exchange, Handler, Middleware } from './exchange.ts';
import { metrics, rateLimiting, recovery, requestLogging, tracing } from './middleware.ts';
import { Router } from './router.ts';
import { requestDoneSignal } from '../http/rest/request-ended.ts';

export type StdlibDeps = RestParts;

export function createStdlibRouter(deps: Pick<StdlibDeps, 'api' | 'tokens' | 'observability'>): Router {
  const router = new Router(deps.tokens, deps.observability.logger);
  for (const route of PUBLIC_ROUTES) router.public(route.method, route.path, deps.api[route.operation]);
  for (const route of PROTECTED_ROUTES) router.protected(route.method, route.path, deps.api[route.operation]);
  for (const route of CONTRACT_ROUTES) {
    router.raw('GET', route.path, ({ req, res }) => {
      const reply = route.reply(req.headers['if-none-match']);
      res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) }).end(reply.body);
    });
  }
  return router;
}

/** Spec 4.3 ordering, outermost first: recovery, tracing, metrics, request logging, rate limiter, router. */
export function createStdlibHandler(deps: StdlibDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { observability } = deps;
  const router = createStdlibRouter(deps);
  const chain: Middleware[] = [
    recovery(observability.logger),
    tracing(observability),
    metrics(observability),
    requestLogging(observability.logger),
    rateLimiting(deps.limiter, (method, path) => router.routeLabel(method, path)),
  ];
  const handler: Handler = chain.reduceRight<Handler>((next, layer) => layer(next), router.handle);
  return (req, res) => {
    const target = req.url ?? '/';
    const url = PLAIN_PATH.test(target) ? undefined : parseTarget(target);
    const exchange: Exchange = {
      req,
      res,
      method: req.method ?? 'GET',
      path: url?.pathname ?? target,
      query: url?.searchParams ?? new URLSearchParams(),
      signal: requestDoneSignal(res),
      route: undefined,
    };
    void handler(exchange);
  };
}

/**
 * A target the URL parser would return unchanged as the path, with no query: letters, digits, `-`, `_`
 * and `/` only (no dot segment, escape, backslash or `?` to resolve). The usual request (`/orders/<uuid>`)
 * skips the parse, ~1% of a cache-hit GET's CPU (bench/profile.ts).
 */
export const PLAIN_PATH = /^\/[A-Za-z0-9_\-/]*$/;

/**
 * Origin-form (`/path?query`) is a path even when it begins with `//` (not a host, as `new URL('//x/orders',
 * base)` would read it). A target that is no valid URL (`GET http://[ HTTP/1.1`) must not throw out of
 * the request listener, where an uncaught exception ends the process: it goes down the chain as a path
 * that matches no route.
 */
function parseTarget(target: string): URL | undefined {
  const text = target.startsWith('/') ? `http://public${target}` : target;
  return URL.parse(text) ?? undefined; // one parse; null, not a throw, for an invalid target
}

export function createStdlibServer(deps: StdlibDeps, settings?: Http1Settings): Server {
  return createHttp1Server(createStdlibHandler(deps), settings);
}
