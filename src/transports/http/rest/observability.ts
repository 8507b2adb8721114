/**
 * The observation steps of spec 4.3/4.5 (a span, the request metrics, one request log line), written once
 * for every HTTP transport; each calls them from its own middleware, one layer per step. `route` is the
 * matched route's label (`GET /orders/{id}`), or undefined when none matched.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { startServerSpan } from '../../../observability/request-trace.ts';
import type { HttpMetrics } from '../../../observability/metrics.ts';
import { UNMATCHED_ROUTE } from '../../../observability/metrics.ts';
import type { Logger } from '../../../ports/logger.ts';

/** What the observation steps write to: the service's tracer, metrics registry and logger. */
export interface HttpObservability {
  readonly tracer: Tracer;
  readonly metrics: HttpMetrics;
  readonly logger: Logger;
}

/** Span name when no route matched (spec 4.5). */
export const UNMATCHED_SPAN_NAME = 'http.request';

/**
 * A SERVER span per request (OpenTelemetry HTTP server conventions), child of the caller's
 * `traceparent` (rule TRACE-context); run inside the request scope, so log lines carry its ids.
 */
export function startRequestSpan(tracer: Tracer, method: string, path: string, headers: IncomingHttpHeaders): Span {
  return startServerSpan(tracer, UNMATCHED_SPAN_NAME, { 'http.request.method': method, 'url.path': path }, headers);
}

/** `route` is the label `GET /orders/{id}`: the span's name, and its template is `http.route`. */
export function endRequestSpan(span: Span, route: string | undefined, status: number): void {
  if (route !== undefined) {
    span.updateName(route);
    span.setAttribute('http.route', route.slice(route.indexOf(' ') + 1));
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export function recordRequestMetrics(
  metrics: HttpMetrics,
  method: string,
  route: string | undefined,
  status: number,
  startedAt: number,
): void {
  metrics.observe(method, route ?? UNMATCHED_ROUTE, status, (performance.now() - startedAt) / 1000);
}

/**
 * One line per request, after the response; bodies are never logged (spec 4.3 rule 2). Explicit fields
 * only (rule LOG-explicit-fields); trace_id and span_id come from the request scope (rule TRACE-log-ids).
 */
export function logRequest(logger: Logger, method: string, path: string, status: number): void {
  logger.info({ method, path, status }, 'request');
}
