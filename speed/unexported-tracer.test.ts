import { isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { startServerSpan } from '../src/observability/request-trace.ts';
import { Tracing } from '../src/observability/tracer.ts';
import { UnexportedTracer } from './unexported-tracer.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const ringTracing = (processors: SimpleSpanProcessor[] = []): Tracing =>
  new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '', processors, unexported: () => new UnexportedTracer() });

describe('UnexportedTracer (speed ring, rule TRACE-no-exporter-work)', () => {
  it('[TRACE-no-exporter-work, TRACE-no-endpoint] with nothing to export to, spans are sampled with valid ids and nothing is recorded', async () => {
    const tracing = ringTracing();
    expect(tracing.tracer).toBeInstanceOf(UnexportedTracer);
    const span = tracing.tracer.startSpan('work');
    expect(isSpanContextValid(span.spanContext())).toBe(true);
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    expect(span.isRecording()).toBe(false);
    expect(tracing.tracer.startSpan('other').spanContext().traceId).not.toBe(span.spanContext().traceId);
    span.end();
    await tracing.stop();
  });

  it('is used only when nothing is exported: a processor gets the SDK, which records', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = ringTracing([new SimpleSpanProcessor(exporter)]);
    expect(tracing.tracer).not.toBeInstanceOf(UnexportedTracer);
    tracing.tracer.startSpan('work').end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['work']);
    await tracing.stop();
  });

  it('[TRACE-context] a SERVER span continues a valid traceparent, keeps its sampled flag, and ignores a malformed one', () => {
    const { tracer } = ringTracing();
    const child = startServerSpan(tracer, 'x', {}, { traceparent: TRACEPARENT }).spanContext();
    expect([child.traceId, child.traceFlags & TraceFlags.SAMPLED]).toEqual(['0af7651916cd43dd8448eb211c80319c', TraceFlags.SAMPLED]);
    expect(child.spanId).not.toBe('b7ad6b7169203331');
    const unsampled = startServerSpan(tracer, 'x', {}, { traceparent: TRACEPARENT.replace(/01$/, '00') }).spanContext();
    expect(unsampled.traceFlags & TraceFlags.SAMPLED).toBe(0);
    const fresh = startServerSpan(tracer, 'x', {}, { traceparent: '00-zz-b7ad6b7169203331-01' }).spanContext();
    expect(isSpanContextValid(fresh)).toBe(true);
    expect(fresh.traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(fresh.traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
  });

  const PARENT = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  });

  it.each([
    ['(name, fn)', (tracer: UnexportedTracer, fn: (span: Span) => string) => tracer.startActiveSpan('x', fn)],
    ['(name, options, fn)', (tracer: UnexportedTracer, fn: (span: Span) => string) => tracer.startActiveSpan('x', {}, fn)],
  ])('startActiveSpan%s runs fn with a fresh valid sampled span in a new trace and returns what fn returns', (_, call) => {
    const seen: Span[] = [];
    const result = call(new UnexportedTracer(), (span) => (seen.push(span), 'done'));
    expect(result).toBe('done');
    expect(seen).toHaveLength(1);
    expect(isSpanContextValid(seen[0]!.spanContext())).toBe(true);
    expect(seen[0]!.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('[TRACE-context] startActiveSpan(name, options, context, fn) makes the span a child of the context given', () => {
    const seen: Span[] = [];
    const result = new UnexportedTracer().startActiveSpan('x', {}, PARENT, (span: Span) => (seen.push(span), 7));
    expect(result).toBe(7);
    expect(seen[0]!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(seen[0]!.spanContext().spanId).not.toBe('b7ad6b7169203331');
  });
});
