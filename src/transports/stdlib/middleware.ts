import type { HttpObservability } from '../http/http-observability.ts';
import { endRequestSpan, logPanic, logRequest, recordRequestMetrics, startRequestSpan } from '../http/http-observability.ts';
import { INTERNAL_ERROR } from '../http/http-errors.ts';
import { RATE_LIMITED_MESSAGE, type TokenBucketLimiter } from '../http/rate-limiter.ts';
import type { Logger } from '../../observability/logger.ts';
import { sendError, type Middleware } from './exchange.ts';

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
    try {
      await next(exchange);
    } finally {
      // A throw below is answered 500 by recovery, outside this layer.
      endRequestSpan(span, exchange.route, exchange.res.headersSent ? exchange.res.statusCode : INTERNAL_ERROR.status);
    }
  };
}

export function metrics(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const startedAt = performance.now();
    try {
      await next(exchange);
    } finally {
      const status = exchange.res.headersSent ? exchange.res.statusCode : INTERNAL_ERROR.status;
      recordRequestMetrics(observability.metrics, exchange.method, exchange.route, status, startedAt);
    }
  };
}

export function requestLogging(logger: Logger): Middleware {
  return (next) => async (exchange) => {
    try {
      await next(exchange);
    } finally {
      logRequest(logger, exchange.method, exchange.path, exchange.res.headersSent ? exchange.res.statusCode : INTERNAL_ERROR.status);
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
