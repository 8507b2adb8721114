import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../../src/adapters/redis/rate-limit-store.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { findBinary, startRedisServer } from './local-servers.ts';

/**
 * Rule LIMIT-rate-store at start-up: the shared store never holds it, whatever Redis does. A Redis outage
 * under running replicas is test/faults/outbox-fleet.test.ts; the per-process fallback's semantics are
 * conformance rate-limit-shared-store-falls-back-per-process.
 */
describe.skipIf(findBinary('redis-server') === undefined)('RedisRateLimitStore start-up with Redis down', () => {
  it('does not hold start-up; decisions fail (so the local bucket decides) until Redis answers, then come from Redis', async () => {
    const redis = await startRedisServer();
    await redis.kill();
    const store = new RedisRateLimitStore({ host: '127.0.0.1', port: redis.port, rate: 1, burst: 1 }, createLogger('error'));
    try {
      await store.init();
      await expect(store.take('client')).rejects.toThrow();
      await redis.start();
      let decided: Awaited<ReturnType<typeof store.take>> | undefined;
      for (let attempt = 0; attempt < 150 && decided === undefined; attempt++) {
        decided = await store.take('client').catch(async () => void (await sleep(100)));
      }
      expect(decided).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
    } finally {
      await store.stop();
      await redis.stop();
    }
  });
});
