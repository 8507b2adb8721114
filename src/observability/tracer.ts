import type { Tracer as OtelTracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Component } from '../lifecycle/component.ts';

/** OpenTelemetry semantic conventions' service.name (ATTR_SERVICE_NAME; stable, so not worth a package). */
const ATTR_SERVICE_NAME = 'service.name';

/** One export attempt, and the whole shutdown flush: our bounds, so a dead collector costs little. */
const EXPORT_TIMEOUT_MS = 2_000;
const SHUTDOWN_TIMEOUT_MS = 3_000;

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
      processors.push(
        new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://${options.otlpEndpoint}/v1/traces`, timeoutMillis: EXPORT_TIMEOUT_MS }), {
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      );
    }
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
      spanProcessors: processors,
    });
    this.tracer = this.#provider.getTracer('orders');
  }

  /**
   * Spec 3.4 rule 5: flush and shut the provider down. Bounded: an unreachable collector (whose
   * exporter retries) must not hold the process's exit; spans it could not take are dropped.
   */
  async stop(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS)));
    await Promise.race([this.#provider.shutdown().catch(() => undefined), deadline]);
    clearTimeout(timer);
  }
}
