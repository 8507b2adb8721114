import type { TransportFactory } from '../transport.ts';
import { closeHttpServer, trackConnections } from '../http/server/http-shutdown.ts';
import { createHttp1Server } from '../http/server/http1-server.ts';
import { http1Timeouts } from '../http/server/platform-timeouts.ts';
import { restParts } from '../http/rest/rest-parts.ts';
import { createKoaApp } from './koa-app.ts';

/** orders-koa's public listener: the Koa app on node:http, with the shared server timeouts. */
export const koaTransport: TransportFactory = (core, choices = {}) => {
  const app = createKoaApp(restParts(core));
  const timeouts = http1Timeouts(choices.platformTimeouts);
  const server = createHttp1Server(app.callback(), { timeouts, response: choices.http1Response });
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts };
};
