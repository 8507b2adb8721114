import type { TransportFactory } from '../../composition/create-app.ts';
import { closeHttpServer } from '../http/http-shutdown.ts';
import { TokenBucketLimiter } from '../http/rate-limiter.ts';
import { HTTP1_SERVER_TIMEOUTS } from '../http/server-timeouts.ts';
import { createStdlibServer } from './stdlib-server.ts';

export const stdlibTransport: TransportFactory = (core) => {
  const server = createStdlibServer({
    api: core.api,
    tokens: core.tokens,
    observability: core.observability,
    limiter: new TokenBucketLimiter(core.config.rateLimitRps),
  });
  return { server, shutdown: () => closeHttpServer(server), timeouts: HTTP1_SERVER_TIMEOUTS };
};
