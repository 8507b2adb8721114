import type { TransportFactory } from '../transport.ts';
import { closeHttpServer, trackConnections } from '../http/server/http-shutdown.ts';
import { http1Timeouts } from '../http/server/platform-timeouts.ts';
import { restParts } from '../http/rest/rest-parts.ts';
import { createStdlibServer } from './stdlib-server.ts';

export const stdlibTransport: TransportFactory = (core, choices = {}) => {
  const timeouts = http1Timeouts(choices.platformTimeouts);
  const server = createStdlibServer(restParts(core), { timeouts, response: choices.http1Response });
  trackConnections(server);
  return { server, shutdown: () => closeHttpServer(server), timeouts };
};
