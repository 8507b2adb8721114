/**
 * orders-koa (spec 1, transport 2): the REST API as a Koa app on @koa/router, mounted with
 * `app.callback()` on the shared hardened node:http server. The middleware is the spec 4.3 chain,
 * outermost first, one `app.use` per layer.
 */
import Koa from 'koa';
import { restParts, type RestParts } from '../http/rest/api.ts';
import { createHttp1Server } from '../http/server/http1.ts';
import { closeHttpServer, trackConnections } from '../http/server/shutdown.ts';
import { http1Timeouts } from '../http/server/timeouts.ts';
import type { TransportFactory } from '../transport.ts';
import type { KoaState } from './context.ts';
import { doneSignal, errorAnswers, hostCheck, metrics, rateLimiting, recovery, requestLogging, tracing, unrouted } from './middleware.ts';
import { createRoutes } from './routes.ts';

/** orders-koa's public listener: the app on node:http, with the shared server timeouts. */
export const koaTransport: TransportFactory = (core, choices = {}) => {
  const app = createKoaApp(restParts(core));
  const timeouts = http1Timeouts(choices.platformTimeouts);
  const server = createHttp1Server(app.callback(), { timeouts, response: choices.http1Response });
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts };
};

function createKoaApp(parts: RestParts): Koa<KoaState> {
  // Spec 4.3 rule 4: release mode set in code (Koa's `env` option), never taken from NODE_ENV; the
  // client address is the TCP peer, not X-Forwarded-For (`proxy` off).
  const app = new Koa<KoaState>({ env: 'production', proxy: false });
  // Koa's own error printing off: recovery logs through our logger (rule CHAIN-R4-framework-logger).
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
