import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/**
 * The opaque caller key the core's login gate queues by (rule LOGIN-gate-fair): the TCP peer address, as the rate
 * limiter keys (X-Forwarded-For is not trusted, spec 4.3 rule 4).
 */
export function clientKey(req: IncomingMessage | Http2ServerRequest): string {
  return req.socket.remoteAddress ?? 'unknown';
}
