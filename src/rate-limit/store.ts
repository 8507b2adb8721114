/**
 * A rate-limit budget per client key (spec 8 "Rate limit", rule LIMIT-rate-keying): the store contract,
 * the one decision formula, and the in-process token bucket (RATE_LIMIT_STORE=memory, and the fallback
 * of the Redis store, src/adapters/redis/rate-limit-store.ts, which runs the same bucket inside Redis).
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
 * The decision for a bucket of `burst` tokens refilled at `rate` per second that holds `tokens` after the
 * take: one formula for both stores, so both send the same headers for the same state.
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

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets held before a new key first prunes the full ones. */
const PRUNE_ABOVE = 10_000;

/** In-process token bucket per client key, refilled at RATE_LIMIT_RPS per second, burst RATE_LIMIT_RPS. */
export class TokenBucketLimiter implements RateLimitStore {
  readonly #rate: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #pruneAbove = PRUNE_ABOVE;

  constructor(ratePerSecond: number, burst = ratePerSecond, now: () => number = () => performance.now()) {
    this.#rate = ratePerSecond;
    this.#burst = burst;
    this.#now = now;
  }

  /** Buckets held: memory in use, for tests. */
  get size(): number {
    return this.#buckets.size;
  }

  take(key: string): RateLimitDecision {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, updatedAt: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate);
    bucket.updatedAt = now;
    if (!this.#buckets.has(key)) {
      if (this.#buckets.size >= this.#pruneAbove) {
        this.#prune(now);
        // Amortised: while most buckets are in use, scan again only once the map has doubled, not per new key.
        this.#pruneAbove = Math.max(PRUNE_ABOVE, 2 * this.#buckets.size);
      }
      this.#buckets.set(key, bucket);
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return bucketDecision(allowed, bucket.tokens, this.#rate, this.#burst, now);
  }

  /** A bucket that would be full again carries no information: dropping it bounds memory. */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate >= this.#burst) this.#buckets.delete(key);
    }
  }
}
