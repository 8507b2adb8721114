import { createServer } from 'node:http';
import type { TransportFactory } from '../../composition/create-app.ts';
import { closeHttpServer } from '../http/http-shutdown.ts';
import { HEADERS_TIMEOUT_MS, HTTP1_SERVER_TIMEOUTS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../http/server-timeouts.ts';
import { createKoaApp } from './koa-app.ts';

/** orders-koa's public listener: the Koa app on node:http, with the shared server timeouts. */
export const koaTransport: TransportFactory = (core) => {
  const app = createKoaApp(core, { limiter: 'memory' });
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS },
    app.callback(),
  );
  return { server, shutdown: () => closeHttpServer(server), timeouts: HTTP1_SERVER_TIMEOUTS };
};
