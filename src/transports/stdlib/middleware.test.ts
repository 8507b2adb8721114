import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../observability/logger.ts';
import { HttpMetrics } from '../../observability/metrics.ts';
import { Tracing } from '../../observability/tracer.ts';
import type { Logger } from '../../ports/logger.ts';
import { metrics, recovery, requestLogging, tracing, type Handler } from './middleware.ts';
import { getOrCut } from '../../../test/support/get-or-cut.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

interface Chain {
  readonly url: string;
  readonly lines: Record<string, unknown>[];
  /** What the observers recorded: the request line's, the metric's and the span's status. */
  readonly statuses: string[];
}

/** The stdlib chain's recovery and observers (server.ts order) around `inner`, on node:http. */
async function start(inner: (logger: Logger) => Handler): Promise<Chain> {
  const lines: Record<string, unknown>[] = [];
  const statuses: string[] = [];
  const logger = createLogger('debug', {
    write(text: string) {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      if (line['msg'] === 'request') statuses.push(`log:${String(line['status'])}`);
    },
  });
  const recorder: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span: ReadableSpan) => void statuses.push(`span:${String(span.attributes['http.response.status_code'])}`),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const httpMetrics = new HttpMetrics();
  const observe = httpMetrics.observe.bind(httpMetrics);
  httpMetrics.observe = (method, route, status, seconds) => {
    statuses.push(`metrics:${status}`);
    observe(method, route, status, seconds);
  };
  const observability = {
    tracer: new Tracing({ serviceName: 'middleware-test', otlpEndpoint: '', processors: [recorder] }).tracer,
    metrics: httpMetrics,
    logger,
  };
  const handler = [recovery(logger), tracing(observability), metrics(observability), requestLogging(logger)].reduceRight<Handler>(
    (next, layer) => layer(next),
    inner(logger),
  );
  server = createServer((req, res) => {
    const path = req.url!;
    void handler({
      req,
      res,
      method: req.method!,
      path,
      query: new URLSearchParams(),
      signal: new AbortController().signal,
      route: undefined,
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines, statuses };
}

describe('stdlib recovery and observers', () => {
  it('[CHAIN-R1-panic, METRICS-status] a throw after the headers were sent cuts the connection (no second answer), is logged, and is recorded with the status sent', async () => {
    const chain = await start(() => async ({ res }) => {
      res.writeHead(202, { 'content-type': 'text/plain' });
      res.write('partial');
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('failed mid-answer');
    });
    const outcome = await getOrCut(chain.url);
    expect(outcome).toStrictEqual({ status: 202, body: 'partial', complete: false });
    await expect
      .poll(() => chain.lines.find((l) => l['msg'] === 'api: panic recovered'))
      .toMatchObject({ panic: 'failed mid-answer', path: '/thing' });
    expect(chain.statuses).toStrictEqual(['log:202', 'metrics:202', 'span:202']);
  });

  it('[METRICS-status, CHAIN-R2-request-log] a handler that returns without writing a header is recorded as 200', async () => {
    const chain = await start(() => async ({ res }) => {
      // Answered after the chain returned: no header was written when the observers look.
      setImmediate(() => res.end('late'));
    });
    expect(await getOrCut(chain.url)).toStrictEqual({ status: 200, body: 'late', complete: true });
    expect(chain.statuses).toStrictEqual(['log:200', 'metrics:200', 'span:200']);
  });

  it('[TRACE-log-ids] a line logged after the request ended, by a timer the request started, carries no trace ids', async () => {
    const chain = await start((logger) => async ({ res }) => {
      logger.info({}, 'during');
      setTimeout(() => logger.info({}, 'after'), 20);
      res.end('ok');
    });
    expect((await getOrCut(chain.url)).status).toBe(200);
    await expect.poll(() => chain.lines.find((l) => l['msg'] === 'after')).toBeDefined();
    const during = chain.lines.find((l) => l['msg'] === 'during');
    expect(during?.['trace_id']).toMatch(/^[0-9a-f]{32}$/);
    const late = chain.lines.find((l) => l['msg'] === 'after');
    expect(late?.['trace_id']).toBeUndefined();
    expect(late?.['span_id']).toBeUndefined();
  });
});
