import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisConfigFromEnv } from '../../src/adapters/redis/connection.ts';
import { RedisOrderCache } from '../../src/adapters/redis/order-cache.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { listenLocal } from '../support/ports.ts';

const silent = pino({ enabled: false });

// Missing, and never echoing a malformed value: src/config/rules.test.ts.
describe('redisConfigFromEnv (spec 8.1)', () => {
  it('reads host:port with the fixed defaults', () => {
    expect(redisConfigFromEnv({ REDIS_ADDR: '127.0.0.1:6379' })).toEqual({
      host: '127.0.0.1',
      port: 6379,
      ttlSeconds: 300,
      keyPrefix: 'orders:order:',
    });
    expect(redisConfigFromEnv({ REDIS_ADDR: 'redis.internal:6380' })).toMatchObject({ host: 'redis.internal', port: 6380 });
    expect(redisConfigFromEnv({ REDIS_ADDR: '[::1]:6379' })).toMatchObject({ host: '::1', port: 6379 });
    // Both ends of the port range.
    expect(redisConfigFromEnv({ REDIS_ADDR: 'localhost:65535' })).toMatchObject({ host: 'localhost', port: 65_535 });
    expect(redisConfigFromEnv({ REDIS_ADDR: 'localhost:1' })).toMatchObject({ host: 'localhost', port: 1 });
  });

  it('a URL is refused with its own hint: no scheme', () => {
    expect(() => redisConfigFromEnv({ REDIS_ADDR: 'redis://127.0.0.1:6379' })).toThrow(
      'config: REDIS_ADDR must be host:port without a scheme (for example 127.0.0.1:6379, not redis://...)',
    );
  });

  // A bare IPv6 address, a database suffix, six digits: the whole value must be host:port, not just its end or start.
  it.each([
    'redis://127.0.0.1:6379',
    '127.0.0.1',
    '127.0.0.1:',
    ':6379',
    '127.0.0.1:0',
    '127.0.0.1:70000',
    'host:port',
    '::1:6379',
    '127.0.0.1:6379/0',
    '127.0.0.1:123456',
  ])('rejects %j', (value) => {
    expect(() => redisConfigFromEnv({ REDIS_ADDR: value })).toThrow(/REDIS_ADDR must be host:port/);
  });
});

describe('RedisOrderCache start-up (spec 3.4 rule 2)', () => {
  it('init against a closed port fails fast with an error naming REDIS_ADDR', async () => {
    const cache = new RedisOrderCache(redisConfigFromEnv({ REDIS_ADDR: '127.0.0.1:1' }), silent);
    const failure = await cache.init().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ErrUnavailable);
    expect(String((failure as Error).message)).toMatch(/^cache: cannot connect to REDIS_ADDR \(127\.0\.0\.1:1\)/);
    await expect(cache.health()).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.get(randomUUID())).rejects.toBeInstanceOf(ErrUnavailable);
    await cache.stop();
  });

  describe('against a server that hangs up on every connection', () => {
    let server: Server;
    let connections = 0;
    let port: number;

    beforeAll(async () => {
      server = createServer((socket: Socket) => {
        connections += 1;
        socket.destroy();
      });
      port = await listenLocal(server);
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('init fails once and the client does not keep reconnecting afterwards', async () => {
      const cache = new RedisOrderCache(redisConfigFromEnv({ REDIS_ADDR: `127.0.0.1:${port}` }), silent);
      await expect(cache.init()).rejects.toThrow(/REDIS_ADDR/);
      const afterInit = connections;
      expect(afterInit).toBe(1);
      await sleep(1_500);
      expect(connections).toBe(afterInit);
    });
  });
});
