import type { TransportFactory } from '../transport.ts';
import { closeHttpServer, trackConnections } from '../http/server/http-shutdown.ts';
import { http1Timeouts } from '../http/server/platform-timeouts.ts';
import { createStdlibServer } from './stdlib-server.ts';

export const stdlibTransport: TransportFactory = (core) => {
  const timeouts = http1Timeouts(core.platformTimeouts);
  const server = createStdlibServer(
    {
      api: core.api,
      tokens: core.tokens,
      observability: core.observability,
      limiter: core.rateLimiter,
    },
    timeouts,
  );
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts };
};
