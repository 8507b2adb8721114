/**
 * The one REST rate limiter of every HTTP transport (node:http, Koa, the gRPC executable's REST side) and
 * its response headers: keys the request (client-address.ts), asks the shared store when there is one and
 * the in-process bucket otherwise (rules LIMIT-rate-keying, LIMIT-rate-store, RATE-headers).
 */
import { channel } from 'node:diagnostics_channel';
import type { Logger } from '../ports/logger.ts';
import type { ClientAddressResolver } from './client-address.ts';
import type { RateLimitDecision, RateLimitStore, TokenBucketLimiter } from './store.ts';

/** The 429 body's message (rule RATE-429-body). */
export const RATE_LIMITED_MESSAGE = 'rate limit exceeded';

/** What a REST request is limited by: its TCP peer and X-Forwarded-For (read only behind TRUST_PROXY). */
export interface LimitedRequest {
  readonly peer: string | undefined;
  readonly forwardedFor: string | string[] | undefined;
}

/** Every decision is published here when someone subscribes (tests, diagnostics): nothing is built otherwise. */
export const RATE_LIMIT_CHANNEL = 'orders:rate-limit:decision';
export interface RateLimitEvent {
  readonly key: string;
  readonly decision: RateLimitDecision;
  /** 'shared' when the shared store answered, 'local' for the in-process bucket (memory store or fallback). */
  readonly source: 'shared' | 'local';
}

export interface HttpRateLimiterOptions {
  readonly resolver: ClientAddressResolver;
  readonly local: TokenBucketLimiter;
  /** Undefined: no shared store (RATE_LIMIT_STORE=memory), the process bucket decides. */
  readonly shared?: RateLimitStore | undefined;
  readonly logger: Logger;
}

/**
 * Rule LIMIT-rate-store: when the shared store fails (Redis down, slow, refusing), this process's own
 * bucket decides, neither fail open nor fail closed; the outage and the recovery are logged once each.
 */
export class HttpRateLimiter {
  readonly #options: HttpRateLimiterOptions;
  readonly #channel = channel(RATE_LIMIT_CHANNEL);
  #inOutage = false;

  constructor(options: HttpRateLimiterOptions) {
    this.#options = options;
  }

  async take(request: LimitedRequest): Promise<RateLimitDecision> {
    const key = this.#options.resolver.resolve(request.peer, request.forwardedFor);
    const shared = this.#options.shared === undefined ? undefined : await this.#takeShared(this.#options.shared, key);
    const decision = shared ?? this.#options.local.take(key);
    if (this.#channel.hasSubscribers) {
      this.#channel.publish({ key, decision, source: shared === undefined ? 'local' : 'shared' } satisfies RateLimitEvent);
    }
    return decision;
  }

  async #takeShared(shared: RateLimitStore, key: string): Promise<RateLimitDecision | undefined> {
    const { logger } = this.#options;
    try {
      const decision = await shared.take(key);
      if (this.#inOutage) logger.info({}, 'rate limit: shared store answers again');
      this.#inOutage = false;
      return decision;
    } catch (error) {
      if (!this.#inOutage) {
        logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'rate limit: shared store unavailable, limiting per process',
        );
      }
      this.#inOutage = true;
      return undefined;
    }
  }
}

/**
 * Rule RATE-headers: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (whole seconds until the budget
 * is full again, a delta, never an epoch), and on a 429 Retry-After (whole seconds, at least 1).
 */
export function setRateLimitHeaders(res: { setHeader(name: string, value: string): unknown }, decision: RateLimitDecision): void {
  res.setHeader('ratelimit-limit', String(decision.limit));
  res.setHeader('ratelimit-remaining', String(decision.remaining));
  res.setHeader('ratelimit-reset', String(decision.resetSeconds));
  if (!decision.allowed) res.setHeader('retry-after', String(decision.retryAfterSeconds));
}
