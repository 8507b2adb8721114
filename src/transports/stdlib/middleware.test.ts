import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCapture } from '../../../test/support/log-capture.ts';
import { createLogger } from '../../observability/logger.ts';
import { HttpMetrics } from '../../observability/metrics.ts';
import { Tracing } from '../../observability/tracer.ts';
import type { HttpObservability } from '../http/http-observability.ts';
import type { Exchange, Handler } from './exchange.ts';
import { metrics, recovery, requestLogging, tracing } from './middleware.ts';

interface Rig {
  readonly url: string;
  readonly logs: LogCapture;
  readonly spans: InMemorySpanExporter;
  readonly metrics: HttpMetrics;
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * The observers (tracing, metrics, request logging) and recovery around an inner handler, on a real
 * socket. Whatever the inner handler leaves unanswered is ended here, after the chain, so the client
 * never hangs.
 */
async function rig(inner: Handler): Promise<Rig> {
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const spans = new InMemorySpanExporter();
  const observability: HttpObservability = {
    tracer: new Tracing({ serviceName: 'middleware-test', otlpEndpoint: '', processors: [new SimpleSpanProcessor(spans)] }).tracer,
    metrics: new HttpMetrics(),
    logger,
  };
  const chain = [recovery(logger), tracing(observability), metrics(observability), requestLogging(logger)].reduceRight<Handler>((next, layer) => layer(next), inner);
  server = createServer((req, res) => {
    const exchange: Exchange = { req, res, method: req.method ?? 'GET', path: new URL(req.url ?? '/', 'http://x').pathname, query: new URLSearchParams(), signal: new AbortController().signal, route: 'GET /thing' };
    void chain(exchange).then(() => {
      if (!res.writableEnded) res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/thing`, logs, spans, metrics: observability.metrics };
}

async function recorded(r: Rig): Promise<{ log: unknown; metric: string | undefined; span: unknown }> {
  const scrape = await r.metrics.scrape();
  return {
    log: r.logs.find('request')[0]?.status,
    metric: /orders_http_requests_total\{[^}]*status="(\d+)"\}/.exec(scrape)?.[1],
    span: r.spans.getFinishedSpans()[0]?.attributes['http.response.status_code'],
  };
}

describe('stdlib observers: the recorded status', () => {
  it.each<[string, Handler, number]>([
    ['defaults to 200 when the handler never wrote a header (spec 4.5)', async () => undefined, 200],
    ['is the status the handler wrote', async ({ res }) => void res.writeHead(418).end(), 418],
  ])('%s', async (_label, handler, status) => {
    const r = await rig(handler);
    expect((await fetch(r.url)).status).toBe(status);
    expect(await recorded(r)).toStrictEqual({ log: status, metric: String(status), span: status });
  });

  it('is 500 when the handler threw before answering, as recovery then answers', async () => {
    const r = await rig(async ({ res }) => {
      res.statusCode = 404; // set but never sent: recovery's 500 is what the client gets
      throw new TypeError('boom');
    });
    const response = await fetch(r.url);
    expect(response.status).toBe(500);
    expect(await response.json()).toStrictEqual({ error: 'internal server error' });
    expect(await recorded(r)).toStrictEqual({ log: 500, metric: '500', span: 500 });
    expect(r.logs.find('api: panic recovered')).toHaveLength(1);
  });
});
