/**
 * The server span of a request (or gRPC call) and its ids on every log line inside it (rules TRACE-context,
 * TRACE-log-ids), shared by every transport.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { TRACE_PARENT_HEADER, W3CTraceContextPropagator } from '@opentelemetry/core';

/** The ids of the span a request (or gRPC call) runs under, once its transport has started it. */
const scopes = new AsyncLocalStorage<{ traceId?: string; spanId?: string }>();
const propagator = new W3CTraceContextPropagator();

/**
 * Runs one request's (or call's) work in its own scope: every line logged inside it, by any layer,
 * carries the trace_id and span_id of the server span started in it (rule TRACE-log-ids). Each
 * transport's outermost layer opens it, so even the recovery layer's panic line has them. `close`,
 * called when the request is done, forgets the ids: a timer the request started (a session's linger)
 * runs in the same async context later, and is not the request's work.
 */
export function runInRequestScope<T>(work: (close: () => void) => T): T {
  const scope: { traceId?: string; spanId?: string } = {};
  return scopes.run(scope, work, () => {
    scope.traceId = scope.spanId = undefined;
  });
}

/**
 * A SERVER span for an incoming request or call, child of the caller's W3C `traceparent` (and
 * `tracestate`) when it sent a valid one, else the root of a new trace (rule TRACE-context). Its ids
 * become the current scope's log fields.
 */
export function startServerSpan(tracer: Tracer, name: string, attributes: Attributes, headers: IncomingHttpHeaders): Span {
  const parent =
    headers[TRACE_PARENT_HEADER] === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const scope = scopes.getStore();
  if (scope !== undefined) {
    const ids = span.spanContext();
    scope.traceId = ids.traceId;
    scope.spanId = ids.spanId;
  }
  return span;
}

/**
 * The pino mixin (observability/logger.ts): trace_id and span_id inside a request scope whose span has
 * started, nothing elsewhere. A fresh object each call: pino merges the line's own fields into it.
 */
export function traceLogFields(): Record<string, string> {
  const scope = scopes.getStore();
  return scope?.traceId === undefined ? {} : { trace_id: scope.traceId, span_id: scope.spanId! };
}
