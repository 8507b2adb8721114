import ratelimit from 'koa-ratelimit';
import { RATE_LIMITED_MESSAGE } from '../http/rate-limiter.ts';
import { sendError, type KoaMiddleware } from './koa-context.ts';

/** One fixed window of spec 8's "requests per second". */
const WINDOW_MS = 1000;
/** The memory driver never forgets a client; above this many keys, expired windows are dropped. */
const PRUNE_ABOVE = 10_000;

/** The entry koa-ratelimit's memory driver keeps per key (`reset` in epoch seconds). */
interface WindowEntry {
  readonly reset: number;
}

/**
 * koa-ratelimit around the whole router (spec 4.3). Our choices for spec 8's "keying and burst: not
 * shown": keyed by the client address (`ctx.ip`; `app.proxy` is false, so X-Forwarded-For is not
 * trusted and the key is the TCP peer); a fixed 1 s window of RATE_LIMIT_RPS requests, so a client
 * can get up to 2 x RATE_LIMIT_RPS across a window boundary. Headers are koa-ratelimit's own:
 * X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (epoch seconds) and, on 429,
 * Retry-After (whole seconds, at least 1).
 *
 * Cross-replica: the memory driver is per process, so each replica allows RATE_LIMIT_RPS per client.
 * The Redis driver could share one budget across replicas through REDIS_ADDR; we do not use it, because
 * the limiter must keep working when Redis is down and the spec only asks for a per-process limit.
 */
export function rateLimiting(requestsPerSecond: number): KoaMiddleware {
  const db = new Map<string, WindowEntry>();
  const limit = ratelimit({
    driver: 'memory',
    db,
    duration: WINDOW_MS,
    max: requestsPerSecond,
    // An empty address (socket already gone) would fail koa-ratelimit's id assertion.
    id: (ctx) => ctx.ip || 'unknown',
    errorMessage: RATE_LIMITED_MESSAGE,
  });
  let prunedAt = 0;
  return async (ctx, next) => {
    const now = Date.now();
    if (db.size > PRUNE_ABOVE && now - prunedAt >= WINDOW_MS) {
      prunedAt = now;
      for (const [key, entry] of db) if (entry.reset * 1000 < now) db.delete(key);
    }
    await limit(ctx, next);
    // koa-ratelimit answers with its message as text/plain; keep its status and headers, send our JSON.
    if (ctx.state.rateLimit !== undefined) {
      // It truncates Retry-After, which is always 0 inside a 1 s window; "retry now" is a lie, so
      // round up to at least one second, as the node:http limiter does.
      ctx.set('Retry-After', String(Math.max(1, Math.ceil(Number(ctx.response.get('Retry-After')) || 0))));
      sendError(ctx, ctx.status, RATE_LIMITED_MESSAGE);
    }
  };
}
