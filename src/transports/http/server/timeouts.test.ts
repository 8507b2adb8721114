import type { Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../../config/service.ts';
import { createApp } from '../../../composition/create-app.ts';
import { createEmbeddedBackends } from '../../../../embedded/backends.ts';
import { createLogger } from '../../../observability/logger.ts';
import { grpcTransport } from '../../grpc/grpc-transport.ts';
import { HTTP2_IDLE_TIMEOUT_MS, HTTP2_STREAM_REQUEST_TIMEOUT_MS, SNIFF_TIMEOUT_MS } from '../../../../packages/one-port-grpc/index.ts';
import { koaTransport } from '../../koa/app.ts';
import { stdlibTransport } from '../../stdlib/server.ts';
import { http1ServerOptions } from './http1.ts';
import { HTTP1_SERVER_TIMEOUTS, http1Timeouts } from './timeouts.ts';

/**
 * The production timeouts as configuration (rule LIMIT-timeouts): what every public server is built with
 * when no test passes shorter ones. Their enforcement is measured with short values in npm test
 * (conformance http1-timeouts-enforced-as-declared, public-listener-has-finite-timeouts) and at these
 * values, waited out, in the real-backend suite (http1-timeouts-enforced-at-production-values,
 * test/grpc/http2-deadlines.real.test.ts).
 */
async function build(transport: typeof stdlibTransport, platformTimeouts?: Parameters<typeof http1Timeouts>[0]) {
  const logger = createLogger('error');
  const config = loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' }, { embedded: true });
  const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
  return createApp({
    config,
    logger,
    backends,
    transport,
    serviceName: 'orders-test',
    ...(platformTimeouts === undefined ? {} : { platformTimeouts }),
  });
}

describe('platform timeouts: the production values unless a test sets others', () => {
  it('the declared values: headers 10 s, request 30 s, keep-alive 5 s, swept every 250 ms; one-port sniff 10 s; HTTP/2 idle 60 s, stream request 30 s', () => {
    expect(HTTP1_SERVER_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 30_000, idleMs: 5_000 });
    expect(http1Timeouts()).toEqual(HTTP1_SERVER_TIMEOUTS);
    expect(http1ServerOptions()).toMatchObject({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 250,
    });
    expect([SNIFF_TIMEOUT_MS, HTTP2_IDLE_TIMEOUT_MS, HTTP2_STREAM_REQUEST_TIMEOUT_MS]).toEqual([10_000, 60_000, 30_000]);
  });

  it.each([
    ['stdlib', stdlibTransport],
    ['koa', koaTransport],
  ] as const)('%s: its node:http server carries the production values and declares them', async (_name, transport) => {
    const app = await build(transport);
    const server = app.transport.server as Server;
    expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout }).toEqual({
      headers: 10_000,
      request: 30_000,
      keepAlive: 5_000,
    });
    expect(app.transport.timeouts).toEqual(HTTP1_SERVER_TIMEOUTS);
  });

  it('grpc: the one-port listener declares the HTTP/1.1 values and the HTTP/2 idle time', async () => {
    const app = await build(grpcTransport);
    expect(app.transport.timeouts).toEqual({ ...HTTP1_SERVER_TIMEOUTS, idleMs: HTTP2_IDLE_TIMEOUT_MS });
  });

  it('a test harness sets shorter ones in composition; the sweep follows them; the server and its declaration agree', async () => {
    const app = await build(koaTransport, { headersMs: 300, requestMs: 900, keepAliveMs: 200 });
    const server = app.transport.server as Server;
    expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout }).toEqual({
      headers: 300,
      request: 900,
      keepAlive: 200,
    });
    expect(app.transport.timeouts).toEqual({ headersMs: 300, requestMs: 900, idleMs: 200 });
    expect(http1ServerOptions({ headersMs: 300, requestMs: 900, idleMs: 200 }).connectionsCheckingInterval).toBe(30);
  });
});
