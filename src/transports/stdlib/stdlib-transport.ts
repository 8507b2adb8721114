import type { TransportFactory } from '../../composition/create-app.ts';
import { closeHttpServer, trackConnections } from '../http/http-shutdown.ts';
import { HTTP1_SERVER_TIMEOUTS } from '../http/server-timeouts.ts';
import { createStdlibServer } from './stdlib-server.ts';

export const stdlibTransport: TransportFactory = (core) => {
  const server = createStdlibServer({
    api: core.api,
    tokens: core.tokens,
    observability: core.observability,
    limiter: core.rateLimiter,
  });
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts: HTTP1_SERVER_TIMEOUTS };
};
