/**
 * orders-stdlib (spec 1, transport 1): the REST API on node:http alone. Each request becomes an Exchange run
 * down the spec 4.3 chain, outermost first: recovery, tracing, metrics, request logging, rate limiter,
 * router. orders-grpc mounts the same handler as the REST side of its port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { restParts } from '../http/rest/api.ts';
import { requestDoneSignal } from '../http/rest/request.ts';
import { http1Transport } from '../http/server/http1.ts';
import type { Core, TransportFactory } from '../transport.ts';
import { metrics, rateLimiting, recovery, requestLogging, tracing, type Handler, type Middleware } from './middleware.ts';
import { createRouter } from './router.ts';

export const stdlibTransport: TransportFactory = (core, choices) => http1Transport(createStdlibHandler(core), choices);

export function createStdlibHandler(core: Core): (req: IncomingMessage, res: ServerResponse) => void {
  const parts = restParts(core);
  const router = createRouter(parts);
  const chain: Middleware[] = [
    recovery(parts.observability.logger),
    tracing(parts.observability),
    metrics(parts.observability),
    requestLogging(parts.observability.logger),
    rateLimiting(parts.limiter, router.routeLabel),
  ];
  const handler = chain.reduceRight<Handler>((next, layer) => layer(next), router.handle);
  return (req, res) => {
    // Origin-form is a path even when it begins with `//`; a target that is no URL (`GET http://[`) must not
    // throw out of the listener (that ends the process): it goes down the chain as a path no route has.
    const target = req.url ?? '/';
    const url = URL.parse(target.startsWith('/') ? `http://public${target}` : target);
    void handler({
      req,
      res,
      method: req.method ?? 'GET',
      path: url?.pathname ?? target,
      query: url?.searchParams ?? new URLSearchParams(),
      signal: requestDoneSignal(res),
      route: undefined,
    });
  };
}
