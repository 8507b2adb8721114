import type { Logger } from '../../ports/logger.ts';
import type { HttpObservability } from '../http/rest/http-observability.ts';
import { INTERNAL_ERROR, logMappedFailure, logPanic, toHttpError } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan } from '../http/rest/http-observability.ts';
import { matchedRouteLabel, sendError, type KoaContext, type KoaMiddleware } from './koa-context.ts';
import { requestDoneSignal } from '../http/rest/request-ended.ts';
import { checkHostHeader } from '../http/rest/request-headers.ts';
import { allowHeader } from '../http/rest/routes.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';

/**
 * Koa writes the response after the whole chain returns, so an outer layer reads the final status
 * from `ctx.status`; a throw below is answered 500 by recovery, outside these layers.
 */
async function runForStatus(ctx: KoaContext, next: () => Promise<unknown>, record: (status: number) => void): Promise<void> {
  let status = INTERNAL_ERROR.status;
  try {
    await next();
    status = ctx.status;
  } finally {
    record(status);
  }
}

/**
 * Outermost layer (spec 4.3 rule 1), in place of Koa's own onerror: anything thrown below is a logged
 * 500. It opens the request scope, so its panic line carries the request's trace ids (rule TRACE-log-ids).
 */
export function recovery(logger: Logger): KoaMiddleware {
  return (ctx, next) =>
    runInRequestScope(async (close) => {
      try {
        await next();
      } catch (error) {
        logPanic(logger, error, ctx.path);
        if (ctx.res.headersSent) ctx.res.destroy();
        else sendError(ctx, INTERNAL_ERROR.status, INTERNAL_ERROR.message);
      } finally {
        close();
      }
    });
}

/**
 * Tracing, metrics and the request log line (spec 4.3 order: tracing outermost, then metrics, then
 * logging) in one layer: each finishes in the order its own layer would have (logging first, tracing
 * last). One async frame instead of three per request.
 */
export function observe(observability: HttpObservability): KoaMiddleware {
  const { tracer, metrics, logger } = observability;
  return async (ctx, next) => {
    const span = startRequestSpan(tracer, ctx.method, ctx.path, ctx.req.headers);
    const startedAt = performance.now();
    await runForStatus(ctx, next, (status) => {
      logRequest(logger, ctx.method, ctx.path, status);
      const route = matchedRouteLabel(ctx);
      recordRequestMetrics(metrics, ctx.method, route, status, startedAt);
      endRequestSpan(span, route, status);
    });
  };
}

/**
 * What every routed request gets, in one layer: its done signal (spec 3.2 rule 2), attached before any
 * handler can await I/O; the Host check (RFC 9112 §3.2, http/rest/request-headers.ts); and the single error
 * table (toHttpError) for expected errors, while an unexpected one is rethrown so the recovery layer
 * logs it once and masks it as 500 (koa's rule: log only the unexpected).
 */
export function requestScope(logger: Logger): KoaMiddleware {
  return async (ctx, next) => {
    ctx.state.done = requestDoneSignal(ctx.res);
    try {
      checkHostHeader(ctx.req);
      await next();
    } catch (error) {
      const mapped = toHttpError(error);
      if (!mapped.expected) throw error;
      if (mapped.logAs !== undefined) logMappedFailure(logger, mapped.logAs, error, ctx.path);
      if (mapped.closeConnection) ctx.set('Connection', 'close');
      if (mapped.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(mapped.retryAfterSeconds));
      sendError(ctx, mapped.status, mapped.message);
    }
  };
}

/**
 * Spec 4.1: the JSON error body on the answers no route writes. Koa leaves an unmatched path a bodiless
 * 404; router.allowedMethods() answers a known path's other methods with a bodiless 405 (501 for
 * OPTIONS, which koa-routes.ts keeps out of the router's methods so that it is not answered 200) and an
 * Allow header in its layers' order. Both become 405 with Allow in the order orders-stdlib sends
 * (http/rest/routes.ts allowHeader); an unknown path is 404 whatever the method.
 */
export function jsonFallbacks(): KoaMiddleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined) return;
    // No Allow (or an empty one, OPTIONS on an unknown path): no route has this path.
    const allowed: unknown = ctx.response.get('Allow');
    if (typeof allowed !== 'string' || allowed === '') {
      ctx.remove('Allow');
      return sendError(ctx, 404, 'not found');
    }
    ctx.set('Allow', allowHeader(allowed.split(', ')));
    sendError(ctx, 405, 'method not allowed');
  };
}
