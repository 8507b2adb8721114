/**
 * orders-koa (spec 1, transport 2): the REST API as a Koa app on @koa/router, mounted with `app.callback()`
 * on the shared hardened node:http server; the spec 4.3 chain outermost first, one `app.use` per layer.
 */
import Koa from 'koa';
import { restParts, type RestParts } from '../http/rest/api.ts';
import { http1Transport } from '../http/server/http1.ts';
import type { TransportFactory } from '../transport.ts';
import type { KoaState } from './context.ts';
import { doneSignal, errorAnswers, hostCheck, metrics, rateLimiting, recovery, requestLogging, tracing, unrouted } from './middleware.ts';
import { createRoutes } from './routes.ts';

export const koaTransport: TransportFactory = (core, choices) => http1Transport(createKoaApp(restParts(core)).callback(), choices);

function createKoaApp(parts: RestParts): Koa<KoaState> {
  // Rule CHAIN-R4-framework-logger: release mode in code (`env`), never from NODE_ENV; the client is the TCP
  // peer (`proxy` off); Koa prints no error of its own (`silent`): recovery logs through our logger.
  const app = new Koa<KoaState>({ env: 'production', proxy: false });
  app.silent = true;

  const { observability } = parts;
  const { router, table } = createRoutes(parts.api, parts.tokens);
  app.use(recovery(observability.logger));
  app.use(tracing(observability.tracer));
  app.use(metrics(observability.metrics));
  app.use(requestLogging(observability.logger));
  app.use(rateLimiting(parts.limiter, (method, path) => table.label(method, path)));
  app.use(errorAnswers(observability.logger));
  app.use(doneSignal());
  app.use(hostCheck());
  app.use(router.routes());
  app.use(unrouted());
  return app;
}
