import { channel } from 'node:diagnostics_channel';
import type { Logger } from '../ports/logger.ts';
import type { RateLimitDecision, RateLimitStore } from './rate-limit-store.ts';
import type { ClientAddressResolver } from './client-address.ts';
import type { TokenBucketLimiter } from './token-bucket-limiter.ts';

/** What a REST request is limited by: its TCP peer and X-Forwarded-For (read only behind TRUST_PROXY). */
export interface LimitedRequest {
  readonly peer: string | undefined;
  readonly forwardedFor: string | string[] | undefined;
}

/** Published for every decision when someone subscribes (tests, diagnostics): nothing is built otherwise. */
export const RATE_LIMIT_CHANNEL = 'orders:rate-limit:decision';
export interface RateLimitEvent {
  readonly key: string;
  readonly decision: RateLimitDecision;
  /** 'shared' when the shared store answered, 'local' for the in-process bucket (memory store or fallback). */
  readonly source: 'shared' | 'local';
}

/**
 * The one REST rate limiter of every HTTP transport (node:http, Koa, the gRPC executable's REST side):
 * keys the request (ClientAddressResolver), asks the shared store when there is one and the in-process
 * bucket otherwise. Rule LIMIT-rate-store: when the shared store fails (Redis down, slow, refusing), the
 * request is decided by this process's own bucket, neither let through unlimited (fail open) nor
 * refused (fail closed); during an outage each replica admits up to RATE_LIMIT_RPS per client on its
 * own. The outage and the recovery are logged once each.
 */
export class HttpRateLimiter {
  readonly #resolver: ClientAddressResolver;
  readonly #local: TokenBucketLimiter;
  readonly #shared: RateLimitStore | undefined;
  readonly #logger: Logger;
  readonly #channel = channel(RATE_LIMIT_CHANNEL);
  #inOutage = false;

  constructor(options: {
    resolver: ClientAddressResolver;
    local: TokenBucketLimiter;
    /** Undefined: no shared store (RATE_LIMIT_STORE=memory), the process bucket decides. */
    shared?: RateLimitStore | undefined;
    logger: Logger;
  }) {
    this.#resolver = options.resolver;
    this.#local = options.local;
    this.#shared = options.shared;
    this.#logger = options.logger;
  }

  async take(request: LimitedRequest): Promise<RateLimitDecision> {
    const key = this.#resolver.resolve(request.peer, request.forwardedFor);
    let decision: RateLimitDecision | undefined;
    if (this.#shared !== undefined) decision = await this.#takeShared(key);
    const source = decision === undefined ? 'local' : 'shared';
    decision ??= this.#local.take(key);
    if (this.#channel.hasSubscribers) this.#channel.publish({ key, decision, source } satisfies RateLimitEvent);
    return decision;
  }

  async #takeShared(key: string): Promise<RateLimitDecision | undefined> {
    try {
      const decision = await (this.#shared as RateLimitStore).take(key);
      if (this.#inOutage) {
        this.#inOutage = false;
        this.#logger.info({}, 'rate limit: shared store answers again');
      }
      return decision;
    } catch (error) {
      if (!this.#inOutage) {
        this.#inOutage = true;
        this.#logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'rate limit: shared store unavailable, limiting per process',
        );
      }
      return undefined;
    }
  }
}

/**
 * The one header set of every REST transport (rule RATE-headers): RateLimit-Limit, RateLimit-Remaining
 * and RateLimit-Reset (whole seconds until the budget is full again, a delta, never an epoch), and on a
 * 429 Retry-After (whole seconds, at least 1). Set on the response directly: building a header object
 * and walking its entries on every request cost more than the three calls (bench/ab.ts).
 */
export function setRateLimitHeaders(res: { setHeader(name: string, value: string): unknown }, decision: RateLimitDecision): void {
  res.setHeader('ratelimit-limit', String(decision.limit));
  res.setHeader('ratelimit-remaining', String(decision.remaining));
  res.setHeader('ratelimit-reset', String(decision.resetSeconds));
  if (!decision.allowed) res.setHeader('retry-after', String(decision.retryAfterSeconds));
}
