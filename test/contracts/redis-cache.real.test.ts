import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisConfigFromEnv, type RedisConfig } from '../../src/adapters/redis/connection.ts';
import { RedisOrderCache } from '../../src/adapters/redis/order-cache.ts';
import { orderCacheContract, sampleOrder } from './order-cache.contract.ts';

const REDIS_ADDR = process.env.REDIS_ADDR;
const silent = pino({ enabled: false });

// Missing, and never echoing a malformed value: src/config/rules.test.ts.

describe.skipIf(!REDIS_ADDR)('RedisOrderCache against REDIS_ADDR', () => {
  const prefix = `test:orders:${randomUUID()}:`;
  let admin: Redis;
  let config: RedisConfig;
  /** The cache the storage-format tests read back through. */
  let cache: RedisOrderCache;

  beforeAll(async () => {
    config = { ...redisConfigFromEnv(process.env), keyPrefix: prefix };
    admin = new Redis({ host: config.host, port: config.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await admin.connect();
    cache = new RedisOrderCache(config, silent);
    await cache.init();
  });

  afterAll(async () => {
    await cache.stop();
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  });

  orderCacheContract('redis', async () => {
    const cache = new RedisOrderCache(config, silent);
    await cache.init();
    return { cache, cleanup: () => cache.stop() };
  });

  // The 300 s TTL of a stored entry is conformance real-cache-entry-expires-in-five-minutes, and health
  // against the live server its healthz-clean (cache node ok), both on the real backend columns.
  describe('storage format', () => {
    const order = sampleOrder({ item: 'format', quantity: 7, createdAt: new Date('2024-02-03T04:05:06.789Z') });

    it('stores JSON with created_at as ISO 8601 under prefix+id', async () => {
      await cache.set(order);
      const raw = await admin.get(`${prefix}${order.id}`);
      expect(JSON.parse(raw ?? 'null')).toEqual({
        id: order.id,
        user_id: order.userId,
        item: 'format',
        quantity: 7,
        status: 'pending',
        created_at: '2024-02-03T04:05:06.789Z',
      });
    });

    it('an unreadable entry is a miss, not an error', async () => {
      const id = randomUUID();
      await admin.set(`${prefix}${id}`, '{not json');
      await expect(cache.get(id)).resolves.toBeUndefined();
      await admin.set(`${prefix}${id}`, JSON.stringify({ id, status: 'shipped' }));
      await expect(cache.get(id)).resolves.toBeUndefined();
    });

    // Each entry below differs from a readable one in one field only, so every check is needed on its own.
    const stored = { user_id: randomUUID(), item: 'format', quantity: 7, status: 'pending', created_at: '2024-02-03T04:05:06.789Z' };

    it('an entry written in the stored format by someone else is read back', async () => {
      const id = randomUUID();
      await admin.set(`${prefix}${id}`, JSON.stringify({ id, ...stored }));
      await expect(cache.get(id)).resolves.toEqual({
        id,
        userId: stored.user_id,
        item: 'format',
        quantity: 7,
        status: 'pending',
        createdAt: new Date(stored.created_at),
      });
    });

    it.each<[string, (id: string) => unknown]>([
      ['JSON null', () => null],
      ['a JSON string', (id) => id],
      ['an id that is not a string', () => ({ id: 7, ...stored })],
      ['no user_id', (id) => ({ id, ...stored, user_id: undefined })],
      ['an item that is not a string', (id) => ({ id, ...stored, item: null })],
      ['a quantity that is not a number', (id) => ({ id, ...stored, quantity: '7' })],
      ['a status other than pending', (id) => ({ id, ...stored, status: 'shipped' })],
      ['a created_at that is not a string', (id) => ({ id, ...stored, created_at: Date.parse(stored.created_at) })],
      ['a created_at that is no date', (id) => ({ id, ...stored, created_at: 'yesterday' })],
    ])('an entry with %s is a miss', async (_, entry) => {
      const id = randomUUID();
      await admin.set(`${prefix}${id}`, JSON.stringify(entry(id)));
      await expect(cache.get(id)).resolves.toBeUndefined();
    });
  });
});
