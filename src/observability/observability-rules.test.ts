import { createServer, type Socket } from 'node:net';
import { isSpanContextValid, TraceFlags } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { listenLocal } from '../../test/support/ports.ts';
import { createLogger, defaultLogger, parseLogLevel } from './logger.ts';
import { HttpMetrics } from './metrics.ts';
import { Tracing } from './tracer.ts';

// Rule-tagged checks of logging, metrics and tracing (spec 4.5): `[RULE-ID]` in a test name is a conformance case.
describe('observability rules (spec 4.5)', () => {
  it('[LOG-level, LOG-default, LOG-json] LOG_LEVEL selects the level, anything else is info; the logger is the process default', () => {
    const table: [string | undefined, string][] = [
      ['debug', 'debug'],
      ['warn', 'warn'],
      ['error', 'error'],
      ['info', 'info'],
      ['', 'info'],
      [undefined, 'info'],
    ];
    for (const other of ['verbose', 'DEBUG', 'Warn', 'trace', 'fatal', 'warning']) table.push([other, 'info']);
    expect(table.map(([input]) => parseLogLevel(input))).toEqual(table.map(([, level]) => level));
    const capture = new LogCapture();
    const logger = createLogger('info', capture);
    expect(defaultLogger()).toBe(logger);
    defaultLogger().info({ k: 1 }, 'probe');
    expect(capture.lines.at(-1)).toMatchObject({ msg: 'probe', level: 'info' });
    expect(Date.parse(capture.lines.at(-1)!.time)).not.toBeNaN();
  });

  it('[METRICS-own-registry] each metrics instance has its own registry, never the global one', async () => {
    const one = new HttpMetrics();
    const two = new HttpMetrics();
    expect(one.registry).not.toBe(two.registry);
    expect(one.registry).not.toBe(register);
    one.observe('GET', 'GET /orders', 200, 0.01);
    expect(await two.scrape()).not.toContain('GET /orders');
    expect(register.getSingleMetric('orders_http_requests_total')).toBeUndefined();
  });

  it('[TRACE-constructor, LIFE-5-tracer-flush, TRACE-no-endpoint, TRACE-no-connect] the tracer works after its constructor; Stop flushes the batch', async () => {
    const immediate = new InMemorySpanExporter();
    const tracing = new Tracing({ serviceName: 'probe', otlpEndpoint: '', processors: [new SimpleSpanProcessor(immediate)] });
    const span = tracing.tracer.startSpan('probe');
    expect(isSpanContextValid(span.spanContext())).toBe(true);
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    span.end();
    expect(immediate.getFinishedSpans()).toHaveLength(1);
    await tracing.stop();
    // InMemorySpanExporter forgets its spans on shutdown, so a recorder that keeps them.
    const exported: ReadableSpan[] = [];
    let shutDown = false;
    const recorder: SpanExporter = {
      export: (spans, done) => (exported.push(...spans), done({ code: 0 /* ExportResultCode.SUCCESS */ })),
      shutdown: async () => void (shutDown = true),
    };
    const flushing = new Tracing({
      serviceName: 'probe',
      otlpEndpoint: '',
      processors: [new BatchSpanProcessor(recorder, { scheduledDelayMillis: 60_000 })],
    });
    flushing.tracer.startSpan('batched').end();
    expect(exported).toHaveLength(0);
    await flushing.stop();
    expect(exported).toHaveLength(1);
    expect(shutDown).toBe(true);
    // An endpoint that listens sees no connection until spans are exported. (One nobody listens on not
    // failing construction is tracer.test.ts's unreachable-OTLP_ENDPOINT case and conformance's
    // unreachable-otlp-endpoint-does-not-fail-start-up.)
    const connections: Socket[] = [];
    const collector = createServer((socket) => {
      connections.push(socket);
      socket.on('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    });
    const port = await listenLocal(collector);
    try {
      const exporting = new Tracing({ serviceName: 'probe', otlpEndpoint: `127.0.0.1:${port}` });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(connections).toHaveLength(0);
      exporting.tracer.startSpan('exported').end();
      await exporting.stop();
      expect(connections.length).toBeGreaterThanOrEqual(1);
    } finally {
      for (const socket of connections) socket.destroy();
      collector.close();
    }
  });
});
