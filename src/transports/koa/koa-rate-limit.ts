import type Router from '@koa/router';
import { RATE_LIMITED_MESSAGE, setRateLimitHeaders, type HttpRateLimiter } from '../../rate-limit/limiter.ts';
import { routeLabelOfLayers, sendError, type KoaMiddleware, type KoaState } from './koa-context.ts';

/**
 * The REST rate limiter around the whole router (spec 4.3), the same HttpRateLimiter and header set as
 * orders-stdlib (rules LIMIT-rate-keying, RATE-headers). koa-ratelimit is no longer used: it has no
 * fallback when its Redis driver fails, sends X-RateLimit-* with an epoch Reset, counts a fixed window
 * (2 x RATE_LIMIT_RPS across a boundary) and would be a second limiter beside node:http's.
 *
 * A refused request never reaches the routers, so the route label the observers record is resolved
 * here through the router's own matching (rule OBS-429-route-label).
 */
export function rateLimiting(limiter: HttpRateLimiter, router: Router<KoaState>): KoaMiddleware {
  return async (ctx, next) => {
    const decision = await limiter.take({ peer: ctx.req.socket.remoteAddress, forwardedFor: ctx.req.headers['x-forwarded-for'] });
    // node:http's setHeader, not ctx.set: Koa's maps and normalises every pair on each request.
    setRateLimitHeaders(ctx.res, decision);
    if (!decision.allowed) {
      ctx.state.throttledRoute = routeLabelOfLayers(router.match(ctx.path, ctx.method).pathAndMethod, ctx.method);
      sendError(ctx, 429, RATE_LIMITED_MESSAGE);
      return;
    }
    await next();
  };
}
