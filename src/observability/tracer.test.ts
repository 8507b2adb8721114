import { isSpanContextValid, TraceFlags } from '@opentelemetry/api';
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { HANG_GUARD_MS, until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from './logger.ts';
import { EXPORT_FAILURE_LOG_INTERVAL_MS, ReportingExporter, Tracing } from './tracer.ts';
import { startServerSpan } from './request-trace.ts';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms))]);
}

describe('Tracing (spec 4.5)', () => {
  it('[TRACE-no-exporter-work, TRACE-no-endpoint] without an endpoint or processor, spans are sampled with valid ids and reach no processor', async () => {
    const batched = vi.spyOn(BatchSpanProcessor.prototype, 'onEnd');
    try {
      const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '' });
      const span = tracing.tracer.startSpan('work');
      expect(isSpanContextValid(span.spanContext())).toBe(true);
      expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
      expect(tracing.tracer.startSpan('other').spanContext().traceId).not.toBe(span.spanContext().traceId);
      span.end();
      await tracing.stop();
      expect(batched).not.toHaveBeenCalled();
      // The same span with an endpoint goes to the export batch: the spy sees export work where there is some.
      const exporting = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '127.0.0.1:1' });
      exporting.tracer.startSpan('work').end();
      expect(batched).toHaveBeenCalledTimes(1);
      await exporting.stop();
    } finally {
      batched.mockRestore();
    }
  });

  it('two instances are independent: spans of one never reach the other', async () => {
    const a = new InMemorySpanExporter();
    const b = new InMemorySpanExporter();
    const first = new Tracing({ serviceName: 'a', otlpEndpoint: '', processors: [new SimpleSpanProcessor(a)] });
    const second = new Tracing({ serviceName: 'b', otlpEndpoint: '', processors: [new SimpleSpanProcessor(b)] });
    first.tracer.startSpan('only-a').end();
    expect(a.getFinishedSpans().map((s) => s.name)).toStrictEqual(['only-a']);
    expect(b.getFinishedSpans()).toHaveLength(0);
    await Promise.all([first.stop(), second.stop()]);
  });

  it("spans carry the instrumentation scope 'orders'", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '', processors: [new SimpleSpanProcessor(exporter)] });
    tracing.tracer.startSpan('work').end();
    expect(exporter.getFinishedSpans().map((s) => s.instrumentationScope.name)).toStrictEqual(['orders']);
    await tracing.stop();
  });

  it('[LIFE-5-tracer-flush] stop is bounded: a processor whose shutdown never settles is given up on after the shutdown timeout, and a prompt stop leaves no timer behind', async () => {
    vi.useFakeTimers();
    try {
      const hanging: SpanProcessor = {
        onStart: () => undefined,
        onEnd: () => undefined,
        forceFlush: () => Promise.resolve(),
        shutdown: () => new Promise<void>(() => undefined),
      };
      const stuck = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '', processors: [hanging] });
      let stopped = false;
      void stuck.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(2_999);
      expect(stopped).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(stopped).toBe(true);

      const prompt = new Tracing({
        serviceName: 'orders-unit',
        otlpEndpoint: '',
        processors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
      });
      await prompt.stop();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['no processor (the SDK alone)', []],
    ['an in-memory processor (SDK)', [new SimpleSpanProcessor(new InMemorySpanExporter())]],
  ])('with %s: a SERVER span continues a valid traceparent, keeps its sampled flag, and ignores a malformed one', async (_, processors) => {
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '', processors });
    const child = startServerSpan(
      tracing.tracer,
      'x',
      {},
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    ).spanContext();
    expect(child.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(child.spanId).not.toBe('b7ad6b7169203331');
    expect(child.traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    const unsampled = startServerSpan(
      tracing.tracer,
      'x',
      {},
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00' },
    ).spanContext();
    expect(unsampled.traceFlags & TraceFlags.SAMPLED).toBe(0);
    const fresh = startServerSpan(tracing.tracer, 'x', {}, { traceparent: '00-zz-b7ad6b7169203331-01' }).spanContext();
    expect(isSpanContextValid(fresh)).toBe(true);
    expect(fresh.traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(fresh.traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    expect(trace.getSpanContext(ROOT_CONTEXT)).toBeUndefined();
    await tracing.stop();
  });

  it('[TRACE-export-failure-log] a failed export is one warn line, then at most one per interval with the failures in between', () => {
    const capture = new LogCapture();
    let now = 0;
    const failing: SpanExporter = {
      export: (_, done) => done({ code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED 127.0.0.1:1') }),
      shutdown: async () => undefined,
    };
    const exporter = new ReportingExporter(failing, '127.0.0.1:1', createLogger('info', capture), () => now);
    const results: number[] = [];
    const exportOnce = (): void => exporter.export([], (result) => results.push(result.code));
    exportOnce();
    exportOnce();
    now += EXPORT_FAILURE_LOG_INTERVAL_MS - 1;
    exportOnce();
    expect(capture.find('tracer: span export failed; spans dropped')).toHaveLength(1);
    now += 1;
    exportOnce();
    const lines = capture.find('tracer: span export failed; spans dropped');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'warn', endpoint: '127.0.0.1:1', failed_exports: 1, err: 'connect ECONNREFUSED 127.0.0.1:1' });
    expect(lines[1]).toMatchObject({ failed_exports: 3 });
    expect(results).toStrictEqual([1, 1, 1, 1]);
  });

  it('[TRACE-export-failure-log] an unreachable OTLP_ENDPOINT is reported in the log, not thrown', async () => {
    const capture = new LogCapture();
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '127.0.0.1:1', logger: createLogger('info', capture) });
    tracing.tracer.startSpan('lost').end();
    await withTimeout(tracing.stop(), HANG_GUARD_MS, 'stop');
    // The refused connection is reported when the exporter hears of it: on a crowded machine that can be
    // after the 2 s flush bound let stop() return.
    await until(() => capture.find('tracer: span export failed; spans dropped').length > 0, 'the export failure line');
    const [line] = capture.find('tracer: span export failed; spans dropped');
    expect(line).toMatchObject({ level: 'warn', endpoint: '127.0.0.1:1' });
  });

  it('[TRACE-export-failure-log] a successful export logs nothing; a failure without an error or without a logger is still reported to the processor, never thrown', () => {
    const capture = new LogCapture();
    let next: ExportResult = { code: ExportResultCode.SUCCESS };
    const inner: SpanExporter = { export: (_, done) => done(next), shutdown: async () => undefined };
    const results: number[] = [];
    const logged = new ReportingExporter(inner, '127.0.0.1:1', createLogger('info', capture), () => 0);
    logged.export([], (result) => results.push(result.code));
    expect(capture.lines).toEqual([]);
    next = { code: ExportResultCode.FAILED };
    logged.export([], (result) => results.push(result.code));
    expect(capture.find('tracer: span export failed; spans dropped')).toEqual([
      expect.objectContaining({ err: 'export failed', batch_spans: 0 }),
    ]);
    const silent = new ReportingExporter(inner, '127.0.0.1:1', undefined, () => 0);
    expect(() => silent.export([], (result) => results.push(result.code))).not.toThrow();
    expect(results).toStrictEqual([ExportResultCode.SUCCESS, ExportResultCode.FAILED, ExportResultCode.FAILED]);
  });

  it('[LIFE-5-tracer-flush] the reporting exporter passes shutdown and forceFlush to the OTLP exporter (forceFlush resolves when it has none)', async () => {
    const calls: string[] = [];
    const inner: SpanExporter = {
      export: (_, done) => done({ code: ExportResultCode.SUCCESS }),
      shutdown: async () => void calls.push('shutdown'),
      forceFlush: async () => void calls.push('forceFlush'),
    };
    const exporter = new ReportingExporter(inner, '127.0.0.1:1', undefined);
    await exporter.forceFlush();
    await exporter.shutdown();
    expect(calls).toEqual(['forceFlush', 'shutdown']);
    const { forceFlush: _, ...withoutFlush } = inner;
    await expect(new ReportingExporter(withoutFlush, '127.0.0.1:1', undefined).forceFlush()).resolves.toBeUndefined();
  });
});
