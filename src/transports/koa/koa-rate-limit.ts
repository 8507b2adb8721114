import type Router from '@koa/router';
import { rateLimitHeaders, type HttpRateLimiter } from '../http/http-rate-limiter.ts';
import { RATE_LIMITED_MESSAGE } from '../http/rate-limiter.ts';
import { routeLabelOfLayers, sendError, type KoaMiddleware, type KoaState } from './koa-context.ts';

/**
 * The REST rate limiter around the whole router (spec 4.3), the same HttpRateLimiter and header set as
 * orders-stdlib (rules LIMIT-rate-keying, RATE-headers). koa-ratelimit is no longer used: it has no
 * fallback when its Redis driver fails, sends X-RateLimit-* with an epoch Reset, counts a fixed window
 * (2 x RATE_LIMIT_RPS across a boundary) and would be a second limiter beside node:http's.
 *
 * A refused request never reaches the routers, so the route label the observers record is resolved
 * here through the routers' own matching (rule OBS-429-route-label).
 */
export function rateLimiting(limiter: HttpRateLimiter, routers: readonly Router<KoaState>[]): KoaMiddleware {
  return async (ctx, next) => {
    const decision = await limiter.take({ peer: ctx.req.socket.remoteAddress, forwardedFor: ctx.req.headers['x-forwarded-for'] });
    ctx.set(rateLimitHeaders(decision));
    if (!decision.allowed) {
      ctx.state.throttledRoute = routeLabelOfLayers(routers.flatMap((router) => router.match(ctx.path, ctx.method).pathAndMethod), ctx.method);
      sendError(ctx, 429, RATE_LIMITED_MESSAGE);
      return;
    }
    await next();
  };
}
