import type { HttpObservability } from '../http/rest/http-observability.ts';
import { INTERNAL_ERROR, logPanic } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan } from '../http/rest/http-observability.ts';
import { setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/http-rate-limiter.ts';
import { RATE_LIMITED_MESSAGE } from '../../rate-limit/token-bucket-limiter.ts';
import type { Logger } from '../../ports/logger.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';
import { sendError, type Exchange, type Middleware } from './exchange.ts';

/**
 * The status the observers record. A throw below not yet answered is answered 500 by recovery, outside
 * them; otherwise the response's status, which defaults to 200 when the handler never wrote a header
 * (spec 4.5).
 */
function statusOf(exchange: Exchange, failed: boolean): number {
  return failed && !exchange.res.headersSent ? INTERNAL_ERROR.status : exchange.res.statusCode;
}

/**
 * Outermost layer (spec 4.3 rule 1): anything thrown below becomes a logged 500. It opens the request
 * scope, so its own panic line carries the trace ids of the span started inside it (rule TRACE-log-ids).
 */
export function recovery(logger: Logger): Middleware {
  return (next) => (exchange) =>
    runInRequestScope(async (close) => {
      try {
        await next(exchange);
      } catch (error) {
        logPanic(logger, error, exchange.path);
        if (!exchange.res.headersSent) sendError(exchange.res, INTERNAL_ERROR.status, INTERNAL_ERROR.message);
        else exchange.res.destroy();
      } finally {
        close();
      }
    });
}

export function tracing(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const span = startRequestSpan(observability.tracer, exchange.method, exchange.path, exchange.req.headers);
    let failed = true;
    try {
      await next(exchange);
      failed = false;
    } finally {
      endRequestSpan(span, exchange.route, statusOf(exchange, failed));
    }
  };
}

export function metrics(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const startedAt = performance.now();
    let failed = true;
    try {
      await next(exchange);
      failed = false;
    } finally {
      recordRequestMetrics(observability.metrics, exchange.method, exchange.route, statusOf(exchange, failed), startedAt);
    }
  };
}

export function requestLogging(logger: Logger): Middleware {
  return (next) => async (exchange) => {
    let failed = true;
    try {
      await next(exchange);
      failed = false;
    } finally {
      logRequest(logger, exchange.method, exchange.path, statusOf(exchange, failed));
    }
  };
}

/**
 * Around the router (CHAIN-order). A refused request never reaches the router, so the route label the
 * observers record is resolved here from the router's own table (rule OBS-429-route-label).
 */
export function rateLimiting(limiter: HttpRateLimiter, routeLabel: (method: string, path: string) => string | undefined): Middleware {
  return (next) => async (exchange) => {
    const { req, res } = exchange;
    const decision = await limiter.take({ peer: req.socket.remoteAddress, forwardedFor: req.headers['x-forwarded-for'] });
    setRateLimitHeaders(res, decision);
    if (!decision.allowed) {
      exchange.route = routeLabel(exchange.method, exchange.path);
      sendError(res, 429, RATE_LIMITED_MESSAGE);
      return;
    }
    await next(exchange);
  };
}
