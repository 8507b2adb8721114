import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { isSpanContextValid, TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { Tracing } from './tracer.ts';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms))]);
}

describe('Tracing (spec 4.5)', () => {
  it('with an empty endpoint, spans are still created, sampled, with valid ids, and carry service.name', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '', processors: [new SimpleSpanProcessor(exporter)] });
    const span = tracing.tracer.startSpan('work');
    const context = span.spanContext();
    expect(isSpanContextValid(context)).toBe(true);
    expect(context.traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    expect(span.isRecording()).toBe(true);
    span.end();
    const [finished] = exporter.getFinishedSpans();
    expect(finished?.name).toBe('work');
    expect(finished?.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(finished?.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(finished?.spanContext().traceId).not.toBe('0'.repeat(32));
    expect(finished?.resource.attributes['service.name']).toBe('orders-unit');
    await tracing.stop();
  });

  it('without any processor, spans are still sampled with valid ids (nothing is exported)', async () => {
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '' });
    const span = tracing.tracer.startSpan('work');
    expect(isSpanContextValid(span.spanContext())).toBe(true);
    expect(span.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
    span.end();
    await tracing.stop();
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

  it('an unreachable endpoint neither throws at construction nor holds stop() past its bound', async () => {
    const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: '127.0.0.1:1' });
    const span = tracing.tracer.startSpan('work');
    expect(isSpanContextValid(span.spanContext())).toBe(true);
    span.end();
    const started = performance.now();
    await expect(withTimeout(tracing.stop(), 15_000, 'stop')).resolves.toBeUndefined();
    // The exporter retries for ~7 s unbounded; shutdown gives it at most 3 s.
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('construction does not connect; spans reach the endpoint only when exported', async () => {
    const connections: Socket[] = [];
    const collector = createServer((socket) => {
      connections.push(socket);
      socket.on('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const { port } = collector.address() as AddressInfo;
      const tracing = new Tracing({ serviceName: 'orders-unit', otlpEndpoint: `127.0.0.1:${port}` });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(connections).toHaveLength(0);
      tracing.tracer.startSpan('exported').end();
      await withTimeout(tracing.stop(), 15_000, 'stop');
      expect(connections.length).toBeGreaterThanOrEqual(1);
    } finally {
      for (const socket of connections) socket.destroy();
      collector.close();
    }
  });
});
