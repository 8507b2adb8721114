import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

import { REQUEST_ENDED } from '../../errors/table.ts';

/**
 * A request's done signal (spec 3.2 rule 2): aborted when its response closes. A response that was
 * ended by its handler, with nothing listening on the signal, skips the abort: the handler's work is
 * over (it wrote the answer) and no lease is waiting for the fallback; abort() builds and dispatches an
 * Event, 7% of a cache-hit GET on orders-koa (bench/ab.ts). A response cut short (the client
 * went away) always aborts, since its handler may still be running.
 */
export function requestDoneSignal(res: ServerResponse | Http2ServerResponse): AbortSignal {
  const done = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded || getEventListeners(done.signal, 'abort').length > 0) done.abort(REQUEST_ENDED);
  });
  return done.signal;
}
