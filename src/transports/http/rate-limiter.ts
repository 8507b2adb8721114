/**
 * Token bucket per client key for the node:http transport (Koa and the gRPC executable's REST side
 * use koa-ratelimit). Our choices for spec 8's "not shown": keyed by client address, refilled at
 * RATE_LIMIT_RPS tokens per second, burst of RATE_LIMIT_RPS.
 */
export interface RateDecision {
  readonly allowed: boolean;
  /** Whole seconds until a token is available, for Retry-After. */
  readonly retryAfterSeconds: number;
  readonly remaining: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const PRUNE_ABOVE = 10_000;

export class TokenBucketLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #pruneAbove = PRUNE_ABOVE;

  constructor(ratePerSecond: number, burst = ratePerSecond, now: () => number = () => performance.now()) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError('rate limiter: rate and burst must be positive');
    this.#rate = ratePerSecond;
    this.#burst = burst;
    this.#now = now;
  }

  get limit(): number {
    return this.#burst;
  }

  /** Buckets held: memory in use, for tests. */
  get size(): number {
    return this.#buckets.size;
  }

  take(key: string): RateDecision {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, updatedAt: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate);
    bucket.updatedAt = now;
    if (!this.#buckets.has(key)) {
      if (this.#buckets.size >= this.#pruneAbove) {
        this.#prune(now);
        // Amortised: when most buckets are still in use (many clients at once), scanning again on every
        // new key would cost O(n) per request; scan next when the map has doubled instead.
        this.#pruneAbove = Math.max(PRUNE_ABOVE, 2 * this.#buckets.size);
      }
      this.#buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0, remaining: Math.floor(bucket.tokens) };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate)), remaining: 0 };
  }

  /** Buckets that would be full again carry no information: dropping them bounds memory. */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate >= this.#burst) this.#buckets.delete(key);
    }
  }
}

export const RATE_LIMITED_MESSAGE = 'rate limit exceeded';
