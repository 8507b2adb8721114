import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../observability/logger.ts';
import { HttpMetrics } from '../../observability/metrics.ts';
import { Tracing } from '../../observability/tracer.ts';
import type { Logger } from '../../ports/logger.ts';
import { routeLabelOf, type KoaContext, type KoaMiddleware, type KoaState } from './context.ts';
import { metrics, recovery, requestLogging, tracing } from './middleware.ts';
import { getOrCut } from '../../../test/support/get-or-cut.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** orders-koa's recovery and observers (app.ts order) around `inner`, on node:http. */
async function start(inner: (logger: Logger) => KoaMiddleware): Promise<{ url: string; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('debug', { write: (text: string) => void lines.push(JSON.parse(text) as Record<string, unknown>) });
  const app = new Koa<KoaState>();
  app.silent = true;
  app.use(recovery(logger));
  app.use(tracing(new Tracing({ serviceName: 'koa-middleware-test', otlpEndpoint: '' }).tracer));
  app.use(metrics(new HttpMetrics()));
  app.use(requestLogging(logger));
  app.use(inner(logger));
  server = createServer(app.callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines };
}

describe('orders-koa recovery', () => {
  it('[CHAIN-R1-panic] a throw after the headers were sent cuts the connection (no second answer) and is logged', async () => {
    const koa = await start(() => async (ctx) => {
      ctx.res.writeHead(202, { 'content-type': 'text/plain' });
      ctx.res.write('partial');
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('failed mid-answer');
    });
    expect(await getOrCut(koa.url)).toStrictEqual({ status: 202, body: 'partial', complete: false });
    expect(koa.lines.find((l) => l['msg'] === 'api: panic recovered')).toMatchObject({ panic: 'failed mid-answer', path: '/thing' });
  });

  it('[TRACE-log-ids] a line logged after the request ended, by a timer the request started, carries no trace ids', async () => {
    const koa = await start((logger) => async (ctx) => {
      logger.info({}, 'during');
      setTimeout(() => logger.info({}, 'after'), 20);
      ctx.body = 'ok';
    });
    expect((await getOrCut(koa.url)).status).toBe(200);
    await expect.poll(() => koa.lines.find((l) => l['msg'] === 'after')).toBeDefined();
    expect(koa.lines.find((l) => l['msg'] === 'during')?.['trace_id']).toMatch(/^[0-9a-f]{32}$/);
    const late = koa.lines.find((l) => l['msg'] === 'after');
    expect(late?.['trace_id']).toBeUndefined();
    expect(late?.['span_id']).toBeUndefined();
  });
});

describe('routeLabelOf', () => {
  const label = (ctx: { method: string; routerPath?: string; state: KoaState }) => routeLabelOf(ctx as KoaContext);

  it('[METRICS-route-label, METRICS-unmatched] no label without a route the router ran; otherwise the request method and the brace path', () => {
    expect(label({ method: 'GET', state: {} })).toBeUndefined();
    expect(label({ method: 'GET', routerPath: '/orders/:id', state: {} })).toBe('GET /orders/{id}');
    expect(label({ method: 'HEAD', routerPath: '/orders/:id', state: {} })).toBe('HEAD /orders/{id}');
    expect(label({ method: 'GET', state: { throttledRoute: 'GET /orders' } })).toBe('GET /orders');
  });
});
