import { Agent } from 'node:http';
import type { Driver, DriverOptions } from './driver.ts';
import { restDriver } from './rest-operations.ts';
import { http1Send } from './rest-reply.ts';

/** REST over HTTP/1.1 with node:http on a keep-alive pool. */
export function restHttp1Driver(options: DriverOptions): Driver {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  return restDriver('rest-http1', http1Send(options.baseUrl, agent), options, async () => {
    agent.destroy();
  });
}
