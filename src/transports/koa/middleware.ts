/**
 * orders-koa's middleware, one Koa layer per step in app.ts's order: the spec 4.3 chain (recovery, tracing,
 * metrics, request logging, rate limiter), the error table's answers, the done signal, the Host check, and
 * the 404/405 no route writes. Koa writes the response after the chain returns, so an outer layer reads
 * the final `ctx.status` once the layers below are done.
 */
import type { Tracer } from '@opentelemetry/api';
import type { HttpMetrics } from '../../observability/metrics.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';
import type { Logger } from '../../ports/logger.ts';
import { RATE_LIMITED_MESSAGE, setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/limiter.ts';
import { httpErrorAnswer, INTERNAL_ERROR, logPanic } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan } from '../http/rest/observability.ts';
import { checkHostHeader, requestDoneSignal } from '../http/rest/request.ts';
import { allowHeader } from '../http/rest/routes.ts';
import { routeLabelOf, sendError, type KoaContext, type KoaMiddleware } from './context.ts';

/** Runs the layers below, then records the status answered: `ctx.status`, or 500 for a throw left to recovery. */
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
 * Outermost (spec 4.3 rule 1), in place of Koa's onerror: anything thrown below is a logged 500, or a cut
 * connection once the answer began. It opens the request scope, so its panic line carries the trace ids (rule TRACE-log-ids).
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

/** Around the router: a refused request is labelled from the route table (rule METRICS-429-route). */
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

/** The one error table's answer to what is thrown below; anything it does not know goes on to recovery. */
export function errorAnswers(logger: Logger): KoaMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const answer = httpErrorAnswer(error, logger, ctx.path);
      ctx.set(answer.headers);
      sendError(ctx, answer.status, answer.message);
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

/** Rule HTTP-host-header: 400 before routing. */
export function hostCheck(): KoaMiddleware {
  return async (ctx, next) => {
    checkHostHeader(ctx.req);
    await next();
  };
}

/**
 * After router.routes() (@koa/router's "404 handling"): a path some route has (`ctx.matched`) in a method
 * none serves is 405 with Allow, any other 404. Not router.allowedMethods(): it answers OPTIONS 200 and an
 * unknown method 501, where the spec wants 405.
 */
export function unrouted(): KoaMiddleware {
  return (ctx) => {
    const methods = (ctx.matched ?? []).flatMap((layer) => layer.methods);
    if (methods.length === 0) return sendError(ctx, 404, 'not found');
    ctx.set('Allow', allowHeader(methods));
    sendError(ctx, 405, 'method not allowed');
  };
}
