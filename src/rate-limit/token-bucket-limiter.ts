import { bucketDecision, type RateLimitDecision, type RateLimitStore } from './rate-limit-store.ts';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const PRUNE_ABOVE = 10_000;

/**
 * In-process token bucket per client key: the store of RATE_LIMIT_STORE=memory and the fallback of
 * the shared one. Our choices for spec 8's "not shown" (rule LIMIT-rate-keying): refilled at
 * RATE_LIMIT_RPS tokens per second, burst of RATE_LIMIT_RPS.
 */
export class TokenBucketLimiter implements RateLimitStore {
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
        // Amortised: when most buckets are still in use (many clients at once), scanning again on every
        // new key would cost O(n) per request; scan next when the map has doubled instead.
        this.#pruneAbove = Math.max(PRUNE_ABOVE, 2 * this.#buckets.size);
      }
      this.#buckets.set(key, bucket);
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return bucketDecision(allowed, bucket.tokens, this.#rate, this.#burst, now);
  }

  /** Buckets that would be full again carry no information: dropping them bounds memory. */
  #prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#rate >= this.#burst) this.#buckets.delete(key);
    }
  }
}

export const RATE_LIMITED_MESSAGE = 'rate limit exceeded';
