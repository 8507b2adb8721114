import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import compose from 'koa-compose';
import type { KoaContext, KoaState } from './koa-context.ts';

/** Statuses that never carry a body (Koa's `statuses.empty`). */
const EMPTY_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * What `app.callback()` returns, less one thing: Koa's own handler also attaches on-finished to every
 * response (listeners on the response and its socket through ee-first, wrapped in an AsyncResource), to
 * call ctx.onerror if a streamed body fails. That was ~4% of a cache-hit GET on orders-koa (perf record,
 * issue 16) for bodies we never stream: our layers only ever set a string or a Buffer (koa-context.ts),
 * written in one `end()`. Koa's `respond()` is not exported, so its branches for those bodies are here.
 */
export function koaRequestHandler(app: Koa<KoaState>): (req: IncomingMessage, res: ServerResponse) => void {
  const run = compose(app.middleware);
  // As app.callback(): ctx.onerror emits 'error' on the app, which must have a listener (app.silent: no output).
  if (app.listenerCount('error') === 0) app.on('error', app.onerror);
  return (req, res) => {
    const ctx = app.createContext(req, res) as KoaContext;
    res.statusCode = 404;
    run(ctx)
      .then(() => respond(ctx))
      .catch((error: unknown) => ctx.onerror(error as Error));
  };
}

/** Koa's respond() for the bodies our layers set: a string or a Buffer (none on HEAD and the empty statuses). */
function respond(ctx: KoaContext): void {
  const { res } = ctx;
  if (!ctx.writable) {
    res.end();
    return;
  }
  if (EMPTY_BODY_STATUSES.has(ctx.status)) {
    ctx.body = null; // strips Content-Type, Content-Length and Transfer-Encoding
    res.end();
    return;
  }
  // HEAD runs the GET route (rule HTTP-head); the body setter already set Content-Length.
  if (ctx.method === 'HEAD') {
    res.end();
    return;
  }
  const body: unknown = ctx.body;
  // Every path through our layers sets one (notMatched answers what no route did); anything else is a
  // bug, answered 500 by ctx.onerror.
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) throw new TypeError('koa: a response body must be a string or a Buffer');
  res.end(body);
}
