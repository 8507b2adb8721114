/**
 * The tracer component (spec 4.5), complete after its constructor (the API server needs a working tracer at
 * once; no separate start step). The exporter does not connect on construction, so an unreachable endpoint
 * fails only at export time, asynchronously, reported by ReportingExporter. The provider is not registered
 * globally: each instance is its own. With nothing to export to there is no span processor: a span ends and
 * is handed to nothing (rule TRACE-no-exporter-work).
 */
import type { Tracer as OtelTracer } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../ports/logger.ts';

/** Semantic conventions' ATTR_SERVICE_NAME (stable, so not worth a package). */
const ATTR_SERVICE_NAME = 'service.name';

/** One export attempt, and the whole shutdown flush: our bounds, so a dead collector costs little. */
const EXPORT_TIMEOUT_MS = 2_000;
const SHUTDOWN_TIMEOUT_MS = 3_000;
/** Rule TRACE-export-failure-log: at most one warning per this window, however often exports fail. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;

export interface TracingOptions {
  readonly serviceName: string;
  /** host:port, no scheme; empty = spans are created and sampled but never exported (spec 4.5). */
  readonly otlpEndpoint: string;
  /** Extra processors, e.g. a SimpleSpanProcessor over an InMemorySpanExporter in tests. */
  readonly processors?: readonly SpanProcessor[];
  /** Where failed exports are reported (rate-limited); without one they are dropped silently. */
  readonly logger?: Logger;
  /** The tracer when there is nothing to export to (composition's speed ring may give one); the SDK's otherwise. */
  readonly unexported?: () => OtelTracer;
}

export class Tracing implements Component {
  readonly name = 'tracer';
  readonly tracer: OtelTracer;
  readonly #provider: BasicTracerProvider | undefined;

  constructor(options: TracingOptions) {
    const processors: SpanProcessor[] = [...(options.processors ?? [])];
    if (options.otlpEndpoint !== '') {
      const url = `http://${options.otlpEndpoint}/v1/traces`;
      const exporter = new ReportingExporter(
        new OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS }),
        options.otlpEndpoint,
        options.logger,
      );
      processors.push(new BatchSpanProcessor(exporter, { exportTimeoutMillis: EXPORT_TIMEOUT_MS }));
    }
    if (processors.length === 0 && options.unexported !== undefined) {
      this.tracer = options.unexported();
      return;
    }
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
      spanProcessors: processors,
    });
    this.tracer = this.#provider.getTracer('orders');
  }

  /** Spec 3.4 rule 5: flush and shut down, bounded: an unreachable collector must not hold the process's exit. */
  async stop(): Promise<void> {
    if (this.#provider === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS)));
    await Promise.race([this.#provider.shutdown().catch(() => undefined), deadline]);
    clearTimeout(timer);
  }
}

/**
 * Rule TRACE-export-failure-log: a failed export (collector down, refused, too slow) is one warn line
 * naming the endpoint and the error, then at most one per EXPORT_FAILURE_LOG_INTERVAL_MS with the count
 * of failures in between. The spans of a failed batch are dropped; nothing is thrown.
 */
export class ReportingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #endpoint: string;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  #lastWarnAt = Number.NEGATIVE_INFINITY;
  #unreported = 0;

  constructor(inner: SpanExporter, endpoint: string, logger: Logger | undefined, now: () => number = Date.now) {
    this.#inner = inner;
    this.#endpoint = endpoint;
    this.#logger = logger;
    this.#now = now;
  }

  export(...[spans, done]: Parameters<SpanExporter['export']>): void {
    this.#inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.#failed(result.error, spans.length);
      done(result);
    });
  }

  #failed(error: Error | undefined, spans: number): void {
    this.#unreported += 1;
    const now = this.#now();
    if (now - this.#lastWarnAt < EXPORT_FAILURE_LOG_INTERVAL_MS) return;
    this.#lastWarnAt = now;
    this.#logger?.warn(
      { endpoint: this.#endpoint, err: error?.message ?? 'export failed', failed_exports: this.#unreported, batch_spans: spans },
      'tracer: span export failed; spans dropped',
    );
    this.#unreported = 0;
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
