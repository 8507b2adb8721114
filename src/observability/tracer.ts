import type { Tracer as OtelTracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Component } from '../lifecycle/component.ts';

export interface TracingOptions {
  readonly serviceName: string;
  /** host:port, no scheme; empty = spans are created and sampled but never exported (spec 4.5). */
  readonly otlpEndpoint: string;
  /** Extra processors, e.g. a SimpleSpanProcessor over an InMemorySpanExporter in tests. */
  readonly processors?: readonly SpanProcessor[];
}

/**
 * Complete after its constructor (spec 4.5: no separate start step; the API server needs a working
 * tracer at once). The exporter does not connect on construction, so an unreachable endpoint fails only
 * at export time, asynchronously. The provider is not registered globally: each instance is its own.
 */
export class Tracing implements Component {
  readonly name = 'tracer';
  readonly tracer: OtelTracer;
  readonly #provider: BasicTracerProvider;

  constructor(options: TracingOptions) {
    const processors: SpanProcessor[] = [...(options.processors ?? [])];
    if (options.otlpEndpoint !== '') {
      processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://${options.otlpEndpoint}/v1/traces` })));
    }
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
      spanProcessors: processors,
    });
    this.tracer = this.#provider.getTracer('orders');
  }

  /** Spec 3.4 rule 5: flush and shut the provider down. Export failures are not start-up failures. */
  async stop(): Promise<void> {
    await this.#provider.shutdown().catch(() => undefined);
  }
}
