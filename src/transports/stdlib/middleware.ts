/**
 * orders-stdlib's middleware on node:http: the exchange a request travels in, the JSON answers, and the
 * spec 4.3 layers around the router, outermost first as server.ts composes them (rule CHAIN-order):
 * recovery, tracing, metrics, request logging, rate limiter. Each layer is a plain function around the next.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../ports/logger.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';
import { RATE_LIMITED_MESSAGE, setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/limiter.ts';
import { INTERNAL_ERROR, logPanic } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan, type HttpObservability } from '../http/rest/observability.ts';

/** One request/response pair travelling down the chain. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly signal: AbortSignal;
  /** The spec 4.5 label, set by the router (or the limiter), read by the outer layers after the response. */
  route: string | undefined;
}

export type Handler = (exchange: Exchange) => Promise<void>;
export type Middleware = (next: Handler) => Handler;

/** A JSON answer with exactly the headers orders-koa sends too (spec 4.1). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Spec 7's error body: `{"error": "<message>"}`. */
export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: message }, headers);
}

/** Runs the layers below, then records the status answered: the response's (200 if never set), or 500 for a throw left to recovery. */
async function recordStatus(exchange: Exchange, next: Handler, record: (status: number) => void): Promise<void> {
  let failed = true;
  try {
    await next(exchange);
    failed = false;
  } finally {
    record(failed && !exchange.res.headersSent ? INTERNAL_ERROR.status : exchange.res.statusCode);
  }
}

/**
 * Outermost (spec 4.3 rule 1): anything thrown below is a logged 500, or a cut connection once the answer
 * began. It opens the request scope, so its panic line carries the trace ids (rule TRACE-log-ids).
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

/** A SERVER span per request (rules TRACE-*), named after the route once the router has matched one. */
export function tracing(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const span = startRequestSpan(observability.tracer, exchange.method, exchange.path, exchange.req.headers);
    await recordStatus(exchange, next, (status) => endRequestSpan(span, exchange.route, status));
  };
}

/** The request count and duration by route and status (spec 4.5). */
export function metrics(observability: HttpObservability): Middleware {
  return (next) => async (exchange) => {
    const startedAt = performance.now();
    await recordStatus(exchange, next, (status) =>
      recordRequestMetrics(observability.metrics, exchange.method, exchange.route, status, startedAt),
    );
  };
}

/** One `request` line per request, after the response (spec 4.3 rule 2). */
export function requestLogging(logger: Logger): Middleware {
  return (next) => (exchange) => recordStatus(exchange, next, (status) => logRequest(logger, exchange.method, exchange.path, status));
}

/** Around the router: a refused request is labelled from the router's table (rule METRICS-429-route). */
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
