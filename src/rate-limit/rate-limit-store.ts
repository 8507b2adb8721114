/**
 * A rate-limit budget per client key (spec 8 "Rate limit"): a token bucket of `limit` tokens refilled
 * at RATE_LIMIT_RPS per second. The in-process bucket (rate-limit/token-bucket-limiter.ts) and the Redis
 * one shared by every replica (rate-limit/redis-rate-limit-store.ts) both implement it, with the
 * same arithmetic (bucketDecision), so a transport never knows which one answers.
 */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** The bucket size (burst): RateLimit-Limit. */
  readonly limit: number;
  /** Whole tokens left after this request: RateLimit-Remaining. */
  readonly remaining: number;
  /** Whole seconds, at least 1 once a token is spent, until the bucket is full again: RateLimit-Reset. */
  readonly resetSeconds: number;
  /** Whole seconds (at least 1) until a token is available; 0 when allowed: Retry-After. */
  readonly retryAfterSeconds: number;
  /** When the decision was taken, in ms on the store's own clock (Redis TIME for the shared store). */
  readonly atMs: number;
}

export interface RateLimitStore {
  /** Spends one token of `key`'s budget if there is one. Rejects when the store cannot answer (outage). */
  take(key: string): RateLimitDecision | Promise<RateLimitDecision>;
}

/**
 * The decision for a bucket of `burst` tokens refilled at `rate` per second that holds `tokens` after
 * the take: one formula for the in-process bucket and the Redis script's answer, so both send the same
 * headers for the same state (rule LIMIT-rate-keying).
 */
export function bucketDecision(allowed: boolean, tokens: number, rate: number, burst: number, atMs: number): RateLimitDecision {
  return {
    allowed,
    limit: burst,
    remaining: allowed ? Math.floor(tokens) : 0,
    resetSeconds: Math.max(1, Math.ceil((burst - tokens) / rate)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate)),
    atMs,
  };
}
