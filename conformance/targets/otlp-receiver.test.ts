// The runner's OTLP receiver (otlp-receiver.ts) fed by the exporter the service uses: what a case reads
// from it is what the in-memory exporter gives in process (seenSpanOf), field by field.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterEach, describe, expect, it } from 'vitest';
import { OtlpReceiver, seenSpanOf } from './otlp-receiver.ts';

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
});

describe('the OTLP/HTTP receiver', () => {
  it('receives the service exporter`s spans as the in-memory exporter holds them', async () => {
    receiver = await OtlpReceiver.start();
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'orders-test' }),
      spanProcessors: [
        new SimpleSpanProcessor(memory),
        new SimpleSpanProcessor(new OTLPTraceExporter({ url: `http://${receiver.endpoint}/v1/traces` })),
      ],
    });
    const tracer = provider.getTracer('t');
    const parent = trace.setSpanContext(context.active(), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
    const span = tracer.startSpan(
      'GET /orders/{id}',
      { kind: SpanKind.SERVER, attributes: { 'http.response.status_code': 500, 'url.path': '/orders/x' } },
      parent,
    );
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    await provider.forceFlush();
    // Read before shutdown, which empties the in-memory exporter.
    const inMemory = memory.getFinishedSpans().map(seenSpanOf);
    await provider.shutdown();
    expect(receiver.spans).toStrictEqual(inMemory);
    expect(receiver.spans[0]).toMatchObject({
      name: 'GET /orders/{id}',
      kind: SpanKind.SERVER,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: '00f067aa0ba902b7',
      traceFlags: 1,
      statusCode: SpanStatusCode.ERROR,
      attributes: { 'http.response.status_code': 500, 'url.path': '/orders/x' },
      resource: { 'service.name': 'orders-test' },
    });
  });

  it('refuses the protobuf encoding and answers only POST /v1/traces', async () => {
    receiver = await OtlpReceiver.start();
    const post = (path: string, type: string, body: string) =>
      fetch(`http://${receiver!.endpoint}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    expect((await post('/v1/traces', 'application/x-protobuf', 'x')).status).toBe(415);
    expect((await post('/v1/metrics', 'application/json', '{}')).status).toBe(404);
    expect((await post('/v1/traces', 'application/json', '{"resourceSpans":')).status).toBe(400);
    expect((await post('/v1/traces', 'application/json', '{}')).status).toBe(200);
    expect(receiver.spans).toStrictEqual([]);
  });
});
