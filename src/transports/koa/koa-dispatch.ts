import type { Layer, Router } from '@koa/router';
import compose, { type ComposedMiddleware } from 'koa-compose';
import type { KoaContext, KoaMiddleware, KoaState } from './koa-context.ts';

/**
 * The router's middleware, in place of `router.routes()`: @koa/router's own match (`router.match`, the
 * one the rate limiter resolves route labels with), its own captures and parameter decoding, then the
 * matched route's middleware, composed once per route. `routes()` builds and composes a fresh chain of
 * closures for every request (bench/ab.ts, issue 16: part of Koa's extra cost over node:http).
 *
 * Our routes never share a path and method (http/routes.ts) and none is router-level middleware
 * (no `router.use`), so the first layer matching path and method is the route; its last middleware
 * answers. Nothing matched: `next()` (notMatched answers 404 or 405 from `ctx.matched`).
 */
export function dispatch(router: Router<KoaState>): KoaMiddleware {
  const chains = new Map<Layer<KoaState>, ComposedMiddleware<KoaContext>>();
  const chainOf = (layer: Layer<KoaState>): ComposedMiddleware<KoaContext> => {
    let chain = chains.get(layer);
    if (chain === undefined) {
      chain = compose(layer.stack as KoaMiddleware[]);
      chains.set(layer, chain);
    }
    return chain;
  };
  return (ctx, next) => {
    const { path } = ctx;
    const matched = router.match(path, ctx.method);
    ctx.matched = matched.path;
    ctx.routeMatched = matched.route;
    const layer = matched.pathAndMethod[0];
    if (!matched.route || layer === undefined) return next();
    ctx.captures = layer.captures(path);
    ctx.params = layer.params(path, ctx.captures, {});
    return chainOf(layer)(ctx, next);
  };
}
