import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../ports/logger.ts';
import { bucketDecision, type RateLimitStore } from '../../ports/rate-limit-store.ts';
import { ClientAddressResolver } from './client-address.ts';
import { HttpRateLimiter, RATE_LIMIT_CHANNEL, rateLimitHeaders, type RateLimitEvent } from './http-rate-limiter.ts';
import { TokenBucketLimiter } from './rate-limiter.ts';

/** A shared store that can be switched off, as Redis going away looks to the limiter. */
class FlakyStore implements RateLimitStore {
  up = true;
  readonly local = new TokenBucketLimiter(1, 1000, () => 0); // never refills: a budget we can see
  take(key: string) {
    if (!this.up) return Promise.reject(new Error('Connection is closed.'));
    return Promise.resolve(this.local.take(key));
  }
}

function recorder(): { lines: [string, string, LogFields][]; logger: Logger } {
  const lines: [string, string, LogFields][] = [];
  const log = (level: string) => (fields: LogFields, msg: string) => void lines.push([level, msg, fields]);
  return { lines, logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } };
}

describe('HttpRateLimiter: shared store with a per-process fallback (rule LIMIT-rate-store)', () => {
  it('a store outage neither opens nor closes: the local bucket decides, and the outage is logged once', async () => {
    const shared = new FlakyStore();
    const { lines, logger } = recorder();
    const limiter = new HttpRateLimiter({ resolver: new ClientAddressResolver([]), local: new TokenBucketLimiter(1, 2, () => 0), shared, logger });
    const events: RateLimitEvent[] = [];
    const listen = (message: unknown): void => void events.push(message as RateLimitEvent);
    subscribe(RATE_LIMIT_CHANNEL, listen);
    try {
      const peer = { peer: '192.0.2.1', forwardedFor: undefined };
      expect((await limiter.take(peer)).allowed).toBe(true);
      shared.up = false;
      // Local bucket of 2: two allowed (not closed), then refused (not open).
      const during = [await limiter.take(peer), await limiter.take(peer), await limiter.take(peer)].map((d) => d.allowed);
      expect(during).toStrictEqual([true, true, false]);
      shared.up = true;
      expect((await limiter.take(peer)).allowed).toBe(true); // the shared budget still had tokens
      expect(events.map((e) => e.source)).toStrictEqual(['shared', 'local', 'local', 'local', 'shared']);
      expect(events.every((e) => e.key === '192.0.2.1')).toBe(true);
      expect(lines.map(([level, msg]) => `${level}: ${msg}`)).toStrictEqual([
        'warn: rate limit: shared store unavailable, limiting per process',
        'info: rate limit: shared store answers again',
      ]);
      expect(lines[0]?.[2]).toStrictEqual({ err: 'Connection is closed.' });
    } finally {
      unsubscribe(RATE_LIMIT_CHANNEL, listen);
    }
    expect(shared.local.size).toBe(1);
  });
});

describe('rateLimitHeaders (rule RATE-headers)', () => {
  it('RateLimit-Limit/Remaining/Reset as integers, Retry-After only on a refusal', () => {
    expect(rateLimitHeaders(bucketDecision(true, 3.6, 5, 5, 0))).toStrictEqual({ 'ratelimit-limit': '5', 'ratelimit-remaining': '3', 'ratelimit-reset': '1' });
    expect(rateLimitHeaders(bucketDecision(false, 0.2, 0.5, 10, 0))).toStrictEqual({
      'ratelimit-limit': '10',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '20',
      'retry-after': '2',
    });
  });
});
