import Koa from 'koa';
import type { RestParts } from '../http/rest/rest-parts.ts';
import type { KoaState } from './koa-context.ts';
import { jsonFallbacks, observe, recovery, requestScope } from './koa-middleware.ts';
import { rateLimiting } from './koa-rate-limit.ts';
import { createRouter } from './koa-routes.ts';

/**
 * The complete REST API on Koa (spec 1, transport 2). It owns no server: orders-koa mounts
 * `app.callback()` on node:http (koa-transport.ts).
 */
export function createKoaApp(parts: RestParts): Koa<KoaState> {
  const app = new Koa<KoaState>();
  // Spec 4.3 rule 4: release mode set in code, never taken from NODE_ENV; Koa's own error printing off
  // (recovery below logs through our logger); the client address is the TCP peer, not X-Forwarded-For.
  app.env = 'production';
  app.silent = true;
  app.proxy = false;

  const { observability } = parts;
  const router = createRouter(parts.api, parts.tokens);
  // Spec 4.3 ordering, outermost first: recovery, tracing, metrics, request logging, rate limiter, router.
  app.use(recovery(observability.logger));
  app.use(observe(observability));
  // The one REST limiter (memory or shared, per RATE_LIMIT_STORE), as on node:http.
  app.use(rateLimiting(parts.limiter, router));
  // The router: the pieces below answer every request the limiter lets through.
  app.use(requestScope(observability.logger));
  app.use(jsonFallbacks());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
