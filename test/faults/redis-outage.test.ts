import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CACHE_TTL_SECONDS } from '../../src/adapters/redis/connection.ts';
import { RedisOrderCache } from '../../src/adapters/redis/order-cache.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { sampleOrder } from '../contracts/order-cache.contract.ts';
import { findBinary, startRedisServer, type LocalServer } from './local-servers.ts';

/**
 * RedisOrderCache with its server gone: ErrUnavailable, and a reconnect loop that stop() ends, after which it
 * stays unavailable. The cache through an outage under running replicas (served from Postgres, one warning and
 * one recovery line each, /healthz, clean again after a restart) is test/faults/outbox-fleet.test.ts.
 */
describe.skipIf(findBinary('redis-server') === undefined)('RedisOrderCache through a Redis outage (own redis-server)', () => {
  let server: LocalServer;
  let cache: RedisOrderCache;

  beforeAll(async () => {
    server = await startRedisServer();
    cache = new RedisOrderCache(
      { host: '127.0.0.1', port: server.port, ttlSeconds: DEFAULT_CACHE_TTL_SECONDS, keyPrefix: `fault:${randomUUID()}:` },
      pino({ enabled: false }),
    );
    await cache.init();
  });

  afterAll(async () => {
    await cache?.stop();
    await server?.stop();
  });

  it('while its server is down, get, set and health reject with ErrUnavailable; stop ends the reconnect loop', async () => {
    const o = sampleOrder({ item: 'fault' });
    await cache.set(o);
    await server.kill();
    await expect(cache.get(o.id)).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.set(o)).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.health()).rejects.toThrow(/^cache: (ping failed: |not connected to REDIS_ADDR)/);
    await cache.stop();
    await server.start();
    await sleep(1_500);
    // Had the client kept retrying, it would be connected again by now (backoff is capped at 1 s).
    const admin = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    await admin.connect();
    const clients = (await admin.client('LIST')) as string;
    await admin.quit();
    expect(clients.trim().split('\n')).toHaveLength(1);
    // Stopped, it stays unavailable: every operation and health reject.
    await expect(cache.get(randomUUID())).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.health()).rejects.toBeInstanceOf(ErrUnavailable);
  });
});
