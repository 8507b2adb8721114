/**
 * orders-stdlib (spec 1, transport 1): the REST API on node:http alone. It turns each request into an
 * Exchange and runs it down the spec 4.3 chain, outermost first: recovery, tracing, metrics, request
 * logging, rate limiter, router. orders-grpc mounts the same handler as the REST side of its port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import { restParts, type RestParts } from '../http/rest/api.ts';
import { requestDoneSignal } from '../http/rest/request.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES } from '../http/rest/routes.ts';
import { createHttp1Server } from '../http/server/http1.ts';
import { closeHttpServer, trackConnections } from '../http/server/shutdown.ts';
import { http1Timeouts } from '../http/server/timeouts.ts';
import type { Core, TransportFactory } from '../transport.ts';
import { metrics, rateLimiting, recovery, requestLogging, tracing, type Handler, type Middleware } from './middleware.ts';
import { Router } from './router.ts';

/** orders-stdlib's public listener: the handler on the shared hardened HTTP/1.1 server. */
export const stdlibTransport: TransportFactory = (core, choices = {}) => {
  const timeouts = http1Timeouts(choices.platformTimeouts);
  const server = createHttp1Server(createStdlibHandler(core), { timeouts, response: choices.http1Response });
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts };
};

/** The request listener: the REST objects made from the core (restParts), then the chain. */
export function createStdlibHandler(core: Core): (req: IncomingMessage, res: ServerResponse) => void {
  const parts = restParts(core);
  const router = createRouter(parts);
  const chain: Middleware[] = [
    recovery(parts.observability.logger),
    tracing(parts.observability),
    metrics(parts.observability),
    requestLogging(parts.observability.logger),
    rateLimiting(parts.limiter, (method, path) => router.routeLabel(method, path)),
  ];
  const handler = chain.reduceRight<Handler>((next, layer) => layer(next), router.handle);
  return (req, res) => {
    const url = parseTarget(req.url ?? '/');
    void handler({
      req,
      res,
      method: req.method ?? 'GET',
      path: url?.pathname ?? req.url ?? '/',
      query: url?.searchParams ?? new URLSearchParams(),
      signal: requestDoneSignal(res),
      route: undefined,
    });
  };
}

/** The business routes of spec 4.1 and the contract documents, which need no authentication. */
function createRouter(parts: RestParts): Router {
  const router = new Router(parts.tokens, parts.observability.logger);
  for (const route of PUBLIC_ROUTES) router.public(route.method, route.path, parts.api[route.operation]);
  for (const route of PROTECTED_ROUTES) router.protected(route.method, route.path, parts.api[route.operation]);
  for (const route of CONTRACT_ROUTES) {
    router.raw('GET', route.path, ({ req, res }) => {
      const reply = route.reply(req.headers['if-none-match']);
      res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) }).end(reply.body);
    });
  }
  return router;
}

/**
 * Origin-form (`/path?query`) is a path even when it begins with `//` (not a host, as `new URL('//x/orders',
 * base)` would read it). A target that is no valid URL (`GET http://[ HTTP/1.1`) must not throw out of
 * the request listener, where an uncaught exception ends the process: it goes down the chain as a path
 * that matches no route.
 */
function parseTarget(target: string): URL | undefined {
  return URL.parse(target.startsWith('/') ? `http://public${target}` : target) ?? undefined;
}
