import type { HttpObservability } from '../http/http-observability.ts';
import { endRequestSpan, logPanic, logRequest, recordRequestMetrics, startRequestSpan } from '../http/http-observability.ts';
import { INTERNAL_ERROR } from '../http/http-errors.ts';
import { RATE_LIMITED_MESSAGE, type TokenBucketLimiter } from '../http/rate-limiter.ts';
import type { Logger } from '../../observability/logger.ts';
import { sendError, type Exchange, type Middleware } from './exchange.ts';

/**
 * The status the observers record. A throw below not yet answered is answered 500 by recovery, outside
 * them; otherwise the response's status, which defaults to 200 when the handler never wrote a header
 * (spec 4.5).
 */
function statusOf(exchange: Exchange, failed: boolean): number {
  return failed && !exchange.res.headersSent ? INTERNAL_ERROR.status : exchange.res.statusCode;
}

/** Outermost layer (spec 4.3 rule 1): anything thrown below becomes a logged 500. */
export function recovery(logger: Logger): Middleware {
  return (next) => async (exchange) => {
    try {
      await next(exchange);
    } catch (error) {
      logPanic(logger, error, exchange.path);
      if (!exchange.res.headersSent) sendError(exchange.res, INTERNAL_ERROR.status, INTERNAL_ERROR.message);
      else exchange.res.destroy();
    }
  };
}

export function tracing(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const span = startRequestSpan(observability.tracer, exchange.method, exchange.path);
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

export function rateLimiting(limiter: TokenBucketLimiter): Middleware {
  return (next) => async (exchange) => {
    const decision = limiter.take(exchange.req.socket.remoteAddress ?? 'unknown');
    exchange.res.setHeader('ratelimit-limit', String(limiter.limit));
    exchange.res.setHeader('ratelimit-remaining', String(decision.remaining));
    if (!decision.allowed) {
      sendError(exchange.res, 429, RATE_LIMITED_MESSAGE, { 'retry-after': String(decision.retryAfterSeconds) });
      return;
    }
    await next(exchange);
  };
}
