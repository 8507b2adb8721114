/**
 * orders-koa's middleware, one Koa layer per step, in the order app.ts uses them: the spec 4.3 chain
 * (recovery, tracing, metrics, request logging, rate limiter), then what every routed request gets (its
 * done signal, the Host check, the one error table's answers) and the answers no route writes (404, 405).
 * Koa writes the response after the whole chain returns, so an outer layer reads the final status from
 * `ctx.status` once the layers below are done.
 */
import type { Tracer } from '@opentelemetry/api';
import type { HttpMetrics } from '../../observability/metrics.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';
import type { Logger } from '../../ports/logger.ts';
import { RATE_LIMITED_MESSAGE, setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/limiter.ts';
import { INTERNAL_ERROR, logMappedFailure, logPanic, toHttpError } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan } from '../http/rest/observability.ts';
import { checkHostHeader, requestDoneSignal } from '../http/rest/request.ts';
import { allowHeader } from '../http/rest/routes.ts';
import { routeLabelOf, sendError, type KoaContext, type KoaMiddleware } from './context.ts';

/**
 * Runs the layers below, then `record`s the status answered: `ctx.status`, or 500 when they threw (the
 * recovery layer, outside the observers, answers that throw).
 */
async function recordStatus(ctx: KoaContext, next: () => Promise<unknown>, record: (status: number) => void): Promise<void> {
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
 * 500, or a cut connection when the answer had already begun. It opens the request scope, so its panic
 * line carries the request's trace ids (rule TRACE-log-ids).
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

/** A SERVER span per request (rules TRACE-*), named after the route once the router has matched one. */
export function tracing(tracer: Tracer): KoaMiddleware {
  return async (ctx, next) => {
    const span = startRequestSpan(tracer, ctx.method, ctx.path, ctx.req.headers);
    await recordStatus(ctx, next, (status) => endRequestSpan(span, routeLabelOf(ctx), status));
  };
}

/** The request count and duration by route and status (spec 4.5). */
export function metrics(httpMetrics: HttpMetrics): KoaMiddleware {
  return async (ctx, next) => {
    const startedAt = performance.now();
    await recordStatus(ctx, next, (status) => recordRequestMetrics(httpMetrics, ctx.method, routeLabelOf(ctx), status, startedAt));
  };
}

/** One `request` line per request, after the response (spec 4.3 rule 2). */
export function requestLogging(logger: Logger): KoaMiddleware {
  return async (ctx, next) => {
    await recordStatus(ctx, next, (status) => logRequest(logger, ctx.method, ctx.path, status));
  };
}

/**
 * The one REST rate limiter around the whole router (spec 4.3), the same HttpRateLimiter and headers as
 * orders-stdlib (rules LIMIT-rate-keying, RATE-headers). A refused request never reaches the router, so
 * the label the observers record is resolved from the route table (rule METRICS-429-route).
 */
export function rateLimiting(limiter: HttpRateLimiter, routeLabel: (method: string, path: string) => string | undefined): KoaMiddleware {
  return async (ctx, next) => {
    const decision = await limiter.take({ peer: ctx.req.socket.remoteAddress, forwardedFor: ctx.req.headers['x-forwarded-for'] });
    setRateLimitHeaders({ setHeader: (name, value) => ctx.set(name, value) }, decision);
    if (!decision.allowed) {
      ctx.state.throttledRoute = routeLabel(ctx.method, ctx.path);
      sendError(ctx, 429, RATE_LIMITED_MESSAGE);
      return;
    }
    await next();
  };
}

/**
 * Expected errors thrown below are answered from the one error table; an unexpected one is rethrown so
 * the recovery layer logs it once and masks it as 500 (log only the unexpected, except the failures the
 * table marks for the operator).
 */
export function errorAnswers(logger: Logger): KoaMiddleware {
  return async (ctx, next) => {
    try {
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

/** The request's done signal (spec 3.2 rule 2), attached before any handler can await I/O. */
export function doneSignal(): KoaMiddleware {
  return async (ctx, next) => {
    ctx.state.done = requestDoneSignal(ctx.res);
    await next();
  };
}

/** RFC 9112 §3.2: a missing or repeated Host is 400 before routing (rule HTTP-host-header). */
export function hostCheck(): KoaMiddleware {
  return async (ctx, next) => {
    checkHostHeader(ctx.req);
    await next();
  };
}

/**
 * Spec 4.1's answers for what no route served, after router.routes() (@koa/router's "404 handling"): a
 * path some route has, in a method none of them serves, is 405 with Allow (HEAD follows GET, as on
 * orders-stdlib); any other path is 404. `ctx.matched` holds the routes whose path matched.
 * router.allowedMethods() is not used: it answers OPTIONS 200 and a method outside the router's list 501,
 * where the spec wants 405.
 */
export function unrouted(): KoaMiddleware {
  return (ctx) => {
    const methods = (ctx.matched ?? []).flatMap((layer) => layer.methods);
    if (methods.length === 0) return sendError(ctx, 404, 'not found');
    ctx.set('Allow', allowHeader(methods));
    sendError(ctx, 405, 'method not allowed');
  };
}
