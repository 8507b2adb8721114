import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../../src/rate-limit/redis-rate-limit-store.ts';
import { redisConfigFromEnv } from '../../src/adapters/redis/redis-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { TokenBucketLimiter } from '../../src/rate-limit/token-bucket-limiter.ts';
import { realBackendsConfigured } from '../support/in-process-app.ts';

/**
 * Rule LIMIT-rate-store on the real Redis (REDIS_ADDR), prefix-isolated: the shared budget is the
 * in-process token bucket run inside Redis. That replicas spend from one budget per client, RATE_LIMIT_RPS
 * ± 10% across them, is test/cluster (three replicas behind haproxy, npm run test:cluster).
 */
const configured = realBackendsConfigured();

describe.skipIf(!configured)('shared rate limit on the real Redis (RATE_LIMIT_STORE=redis)', () => {
  it('the Redis script decides exactly as the in-process bucket does, step by step (same clock, same requests)', async () => {
    const { host, port } = redisConfigFromEnv(process.env);
    let now = 1_700_000_000_000;
    const clock = (): number => now;
    const shared = new RedisRateLimitStore(
      { host, port, rate: 5, burst: 5, keyPrefix: `test:ratelimit:${randomBytes(6).toString('hex')}:`, clock },
      createLogger('error'),
    );
    const local = new TokenBucketLimiter(5, 5, clock);
    await shared.init();
    try {
      // A pseudo-random walk of gaps (0-700 ms) and three keys: bursts, refusals, partial and full refills.
      let seed = 7;
      const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      for (let step = 0; step < 300; step++) {
        now += Math.floor(random() * (random() < 0.6 ? 70 : 700));
        const key = `client-${Math.floor(random() * 3)}`;
        const [fromRedis, fromMemory] = [await shared.take(key), local.take(key)];
        expect({ step, ...fromRedis }).toStrictEqual({ step, ...fromMemory });
      }
    } finally {
      await shared.stop();
    }
  });
});
