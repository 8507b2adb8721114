/**
 * The observation steps of spec 4.3/4.5 (a span, the request metrics, one log line), once for every HTTP
 * transport's own middleware. `route` is the label (`GET /orders/{id}`), undefined when none matched.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { startServerSpan } from '../../../observability/request-trace.ts';
import type { HttpMetrics } from '../../../observability/metrics.ts';
import { UNMATCHED_ROUTE } from '../../../observability/metrics.ts';
import type { Logger } from '../../../ports/logger.ts';

export interface HttpObservability {
  readonly tracer: Tracer;
  readonly metrics: HttpMetrics;
  readonly logger: Logger;
}

/**
 * A SERVER span per request (OpenTelemetry HTTP server conventions), child of the caller's `traceparent`
 * (rule TRACE-context), named `http.request` until a route matched (spec 4.5).
 */
export function startRequestSpan(tracer: Tracer, method: string, path: string, headers: IncomingHttpHeaders): Span {
  return startServerSpan(tracer, 'http.request', { 'http.request.method': method, 'url.path': path }, headers);
}

/** The label is the span's name; its path template is `http.route`. */
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

/** Spec 4.3 rule 2: explicit fields only (rule LOG-explicit-fields), never a body; trace ids from the request scope. */
export function logRequest(logger: Logger, method: string, path: string, status: number): void {
  logger.info({ method, path, status }, 'request');
}
