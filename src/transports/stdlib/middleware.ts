/**
 * orders-stdlib's middleware on node:http: the exchange a request travels in, the JSON answer helpers, and
 * the layers of spec 4.3 that wrap the router, outermost first (server.ts composes them): recovery,
 * tracing, metrics, request logging, rate limiter. Each layer is a plain function around the next
 * handler. Also the error answer the router gives from the one error table (errors/table.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../ports/logger.ts';
import { runInRequestScope } from '../../observability/request-trace.ts';
import { RATE_LIMITED_MESSAGE, setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/limiter.ts';
import { INTERNAL_ERROR, logMappedFailure, logPanic, toHttpError } from '../errors/table.ts';
import { endRequestSpan, logRequest, recordRequestMetrics, startRequestSpan, type HttpObservability } from '../http/rest/observability.ts';

/** One request/response pair travelling down the chain. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Aborts when the request ends (http/rest/request.ts requestDoneSignal). */
  readonly signal: AbortSignal;
  /** Filled in by the router; read by the outer layers after the response (spec 4.5 route label). */
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

/**
 * Runs the layers below, then `record`s the status answered: the response's, which defaults to 200 when
 * the handler never wrote a header (spec 4.5), or 500 for a throw not yet answered (the recovery layer,
 * outside the observers, answers it).
 */
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
 * Outermost layer (spec 4.3 rule 1): anything thrown below becomes a logged 500, or a cut connection
 * when the answer had already begun. It opens the request scope, so its own panic line carries the trace
 * ids of the span started inside it (rule TRACE-log-ids).
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

/**
 * Around the router (CHAIN-order). A refused request never reaches the router, so the route label the
 * observers record is resolved here from the router's own table (rule METRICS-429-route).
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

/**
 * Writes the error table's answer. An unexpected error is rethrown after nothing was written, so the
 * recovery layer logs it once; expected ones (4xx, 503 session) are not logged here (log only the
 * unexpected), except those the table marks for the operator (backend outages).
 */
export function respondWithError(exchange: Exchange, error: unknown, logger: Logger): void {
  const mapped = toHttpError(error);
  if (!mapped.expected) throw error;
  if (mapped.logAs !== undefined) logMappedFailure(logger, mapped.logAs, error, exchange.path);
  // HTTP/2 (the gRPC executable's REST side) forbids the header; there the stream alone ends.
  const close = mapped.closeConnection && exchange.req.httpVersionMajor < 2;
  const headers: Record<string, string> = close ? { connection: 'close' } : {};
  if (mapped.retryAfterSeconds !== undefined) headers['retry-after'] = String(mapped.retryAfterSeconds);
  sendError(exchange.res, mapped.status, mapped.message, headers);
}
