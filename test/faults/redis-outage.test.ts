import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CACHE_TTL_SECONDS } from '../../src/adapters/redis/redis-config.ts';
import { RedisOrderCache } from '../../src/adapters/redis/redis-order-cache.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import { findBinary, startRedisServer, type LocalServer } from './local-servers.ts';

/** Resolves with how long the call took; fails the test if it resolved instead of rejecting. */
async function rejectionTime(operation: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  const error = await operation().then(() => new Error('expected a rejection'), (err: unknown) => err);
  return { ms: performance.now() - started, error };
}

async function msUntilHealthy(cache: RedisOrderCache, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      await cache.health();
      return performance.now() - started;
    } catch {
      if (performance.now() - started > timeoutMs) throw new Error(`not healthy within ${timeoutMs} ms`);
      await sleep(25);
    }
  }
}

function order(): Order {
  return { id: randomUUID(), userId: randomUUID(), item: 'fault', quantity: 1, status: 'pending', createdAt: new Date() };
}

describe.skipIf(findBinary('redis-server') === undefined)('RedisOrderCache through a Redis outage (own redis-server)', () => {
  let server: LocalServer;
  let cache: RedisOrderCache;
  const lines: Array<{ level: number; msg: string }> = [];

  beforeAll(async () => {
    server = await startRedisServer();
    const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    cache = new RedisOrderCache(
      { host: '127.0.0.1', port: server.port, ttlSeconds: DEFAULT_CACHE_TTL_SECONDS, keyPrefix: `fault:${randomUUID()}:` },
      logger,
    );
    await cache.init();
  });

  afterAll(async () => {
    await cache?.stop();
    await server?.stop();
  });

  it('works before the outage', async () => {
    const o = order();
    await cache.set(o);
    await expect(cache.get(o.id)).resolves.toEqual(o);
    await expect(cache.health()).resolves.toBeUndefined();
  });

  for (const cycle of [1, 2]) {
    it(`outage ${cycle}: get/set/health reject with ErrUnavailable in under a second, then recover after a restart`, async () => {
      const o = order();
      await cache.set(o);
      await server.kill();

      // Stay down long enough for several reconnect attempts (and their errors) to happen.
      for (let i = 0; i < 6; i++) {
        const get = await rejectionTime(() => cache.get(o.id));
        const set = await rejectionTime(() => cache.set(o));
        const health = await rejectionTime(() => cache.health());
        for (const result of [get, set, health]) {
          expect(result.error).toBeInstanceOf(ErrUnavailable);
        }
        expect((health.error as Error).message).toMatch(/^cache: (ping failed: |not connected to REDIS_ADDR)/);
        await sleep(250);
      }

      const restarted = performance.now();
      await server.start();
      const portOpenMs = performance.now() - restarted;
      const healthyMs = portOpenMs + (await msUntilHealthy(cache, 10_000));
      console.log(
        `redis outage ${cycle}: restart -> healthy in ${healthyMs.toFixed(0)} ms (port accepting after ${portOpenMs.toFixed(0)} ms)`,
      );

      // The restarted server kept nothing (no persistence): a miss, then the cache works again.
      await expect(cache.get(o.id)).resolves.toBeUndefined();
      await cache.set(o);
      await expect(cache.get(o.id)).resolves.toEqual(o);
    });
  }

  it('logged one warning per outage and one recovery line, not a line per retry', () => {
    const lost = lines.filter((l) => l.msg.startsWith('cache: connection lost'));
    const restored = lines.filter((l) => l.msg === 'cache: connection restored');
    expect(lost).toHaveLength(2);
    expect(restored).toHaveLength(2);
    expect(lines).toHaveLength(4);
  });

  it('stop ends the reconnect loop even while the server is down', async () => {
    await server.kill();
    await sleep(100);
    await cache.stop();
    await server.start();
    await sleep(1_500);
    // Had the client kept retrying, it would be connected again by now (backoff is capped at 1 s).
    const admin = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    await admin.connect();
    const clients = (await admin.client('LIST')) as string;
    await admin.quit();
    expect(clients.trim().split('\n')).toHaveLength(1);
    await expect(cache.get(randomUUID())).rejects.toBeInstanceOf(ErrUnavailable);
  });
});
