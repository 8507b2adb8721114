import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { HttpMetrics } from '../../observability/metrics.ts';
import { UNMATCHED_ROUTE } from '../../observability/metrics.ts';
import type { Logger } from '../../ports/logger.ts';

/**
 * The observation steps of spec 4.3/4.5, written once; each HTTP transport calls them from its own
 * middleware shape. `route` is the matched pattern (`GET /orders/{id}`) or undefined when none matched.
 */
export interface HttpObservability {
  readonly tracer: Tracer;
  readonly metrics: HttpMetrics;
  readonly logger: Logger;
}

/** Span name when no route matched (spec 4.5). */
export const UNMATCHED_SPAN_NAME = 'http.request';

export function startRequestSpan(tracer: Tracer, method: string, path: string): Span {
  return tracer.startSpan(UNMATCHED_SPAN_NAME, {
    attributes: { 'http.request.method': method, 'url.path': path },
  });
}

export function endRequestSpan(span: Span, route: string | undefined, status: number): void {
  if (route !== undefined) span.updateName(route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export function recordRequestMetrics(metrics: HttpMetrics, method: string, route: string | undefined, status: number, startedAt: number): void {
  metrics.observe(method, route ?? UNMATCHED_ROUTE, status, (performance.now() - startedAt) / 1000);
}

/** One line per request, after the response; bodies are never logged (spec 4.3 rule 2). */
export function logRequest(logger: Logger, method: string, path: string, status: number): void {
  logger.info({ method, path, status }, 'request');
}
