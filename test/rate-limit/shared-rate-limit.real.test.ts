import { randomBytes } from 'node:crypto';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisRateLimitStore } from '../../src/adapters/redis/rate-limit-store.ts';
import { redisConfigFromEnv } from '../../src/adapters/redis/connection.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { TokenBucketLimiter } from '../../src/rate-limit/store.ts';
import { until } from '../support/eventually.ts';
import { LogCapture } from '../support/log-capture.ts';
import { realBackendsConfigured } from '../support/in-process-app.ts';
import { redisConnectionsOpenedBy } from '../support/redis-connections.ts';

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

  describe('the store as a component (construction, init, take, stop)', () => {
    const { host, port } = redisConfigFromEnv(process.env);
    let redis: Redis;
    /** Keys a test may leave behind if it fails half-way; removed in afterAll. */
    const leftKeys: string[] = [];
    const prefix = (): string => `test:ratelimit:${randomBytes(6).toString('hex')}:`;

    beforeAll(() => {
      redis = new Redis({ host, port });
    });

    afterAll(async () => {
      if (leftKeys.length > 0) await redis.del(...leftKeys);
      redis.disconnect();
    });

    const open = async (id: number): Promise<boolean> => (await redis.call('CLIENT', 'LIST', 'ID', String(id))) !== '';

    it('[LIMIT-rate-store] keys are orders:ratelimit:<client> unless a prefix is given, and expire once the bucket is full again', async () => {
      const client = `test-${randomBytes(6).toString('hex')}`;
      const own = prefix();
      leftKeys.push(`orders:ratelimit:${client}`, `${own}${client}`);
      const logger = createLogger('error', new LogCapture());
      const stores = [
        new RedisRateLimitStore({ host, port, rate: 5, burst: 5 }, logger),
        new RedisRateLimitStore({ host, port, rate: 5, burst: 5, keyPrefix: own }, logger),
      ];
      try {
        for (const store of stores) {
          await store.init();
          expect(await store.take(client)).toMatchObject({ allowed: true, remaining: 4 });
        }
        for (const key of [`orders:ratelimit:${client}`, `${own}${client}`]) {
          // One token short at 5 per second: full again after 200 ms, plus the script's second of slack.
          const ttl = await redis.pttl(key);
          expect(ttl, key).toBeGreaterThan(0);
          expect(ttl, key).toBeLessThanOrEqual(1_200);
        }
      } finally {
        for (const store of stores) await store.stop();
      }
    });

    it('[LIMIT-rate-store] take before init is refused; stop before init is harmless; stop releases the connection', async () => {
      const store = new RedisRateLimitStore(
        { host, port, rate: 5, burst: 5, keyPrefix: prefix() },
        createLogger('error', new LogCapture()),
      );
      await expect(store.take('client')).rejects.toThrow(new Error('rate limit store: not initialised'));
      await expect(store.stop()).resolves.toBeUndefined();
      const [id] = await redisConnectionsOpenedBy(() => store.init());
      expect(id).toBeDefined();
      expect(await open(id!)).toBe(true);
      await store.stop();
      await until(async () => !(await open(id!)), 'the store to close its Redis connection', 1_000);
      // Stopped: nothing left to decide with.
      await expect(store.take('client')).rejects.toThrow(new Error('rate limit store: not initialised'));
    });

    it('[LIMIT-rate-store] Redis unreachable at start-up: init does not fail, one warn line; decisions fail at once, then come from Redis once it answers', async () => {
      // A port nobody listens on, until a relay to the real Redis takes it.
      const reserved = createServer();
      await new Promise<void>((resolve) => reserved.listen(0, '127.0.0.1', resolve));
      const { port: downPort } = reserved.address() as { port: number };
      await new Promise<void>((resolve) => reserved.close(() => resolve()));
      const logs = new LogCapture();
      const consoleError = vi.spyOn(console, 'error');
      const store = new RedisRateLimitStore(
        { host: '127.0.0.1', port: downPort, rate: 5, burst: 5, keyPrefix: prefix() },
        createLogger('info', logs),
      );
      let relay: Server | undefined;
      const sockets: Socket[] = [];
      try {
        await store.init();
        const warned = logs.find('rate limit: cannot reach REDIS_ADDR at start-up; limiting per process until it answers');
        expect(warned).toHaveLength(1);
        expect(warned[0]).toMatchObject({ level: 'warn', component: 'rate-limit-store', error: expect.stringMatching(/\S/) });
        // No offline queue: the request is decided locally (HttpRateLimiter) instead of waiting.
        await expect(store.take('client')).rejects.toThrow();
        relay = createServer((socket) => {
          const upstream = tcpConnect(port, host);
          sockets.push(socket, upstream);
          for (const end of [socket, upstream]) end.on('error', () => undefined);
          socket.pipe(upstream).pipe(socket);
        });
        await new Promise<void>((resolve) => relay!.listen(downPort, '127.0.0.1', resolve));
        // The client kept reconnecting (100 ms, then 200 ms…): Redis decides again.
        let decided: Awaited<ReturnType<typeof store.take>> | undefined;
        await until(
          async () => (decided = await store.take('client').catch(() => undefined)) !== undefined,
          'Redis to decide again',
          1_500,
        );
        expect(decided).toMatchObject({ allowed: true, remaining: 4 });
        // Connection errors went to the store's listener, not to ioredis's console fallback.
        expect(consoleError.mock.calls.filter((call) => String(call[0]).includes('[ioredis]'))).toEqual([]);
      } finally {
        consoleError.mockRestore();
        await store.stop();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => (relay === undefined ? resolve() : relay.close(() => resolve())));
      }
    });
  });
});
