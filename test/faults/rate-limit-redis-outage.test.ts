import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../../src/adapters/redis/redis-rate-limit-store.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { RateLimitEvent } from '../../src/transports/http/http-rate-limiter.ts';
import { koaTransport } from '../../src/transports/koa/koa-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { recordDecisions } from '../rate-limit/load.ts';
import { findBinary, startRedisServer, type LocalServer } from './local-servers.ts';

/**
 * Rule LIMIT-rate-store: with RATE_LIMIT_STORE=redis, a Redis outage makes each replica limit on its own
 * bucket: not open (requests beyond the budget still get 429), not closed (the first ones get through).
 * A private redis-server is killed and restarted; the shared one on 6379 is never touched.
 */
const shared = Boolean(process.env['POSTGRES_DSN'] && process.env['NATS_URL']);

/** Polls with requests until one is decided by `source`; the deadline only stops a hang. */
async function untilDecidedBy(app: InProcessApp, source: RateLimitEvent['source']): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    const events = await recordDecisions(async () => void (await fetch(`${app.baseUrl}/me/recent`)).arrayBuffer());
    if (events.some((e) => e.source === source)) return;
    await sleep(100);
  }
  throw new Error(`no decision by the ${source} store within 15 s`);
}

async function statusesOf(app: InProcessApp, count: number): Promise<{ statuses: number[]; events: RateLimitEvent[] }> {
  const statuses: number[] = [];
  const events = await recordDecisions(async () => {
    for (let i = 0; i < count; i++) {
      const response = await fetch(`${app.baseUrl}/orders`);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  });
  return { statuses, events };
}

describe.skipIf(!shared || findBinary('redis-server') === undefined)('shared rate limit through a Redis outage (own redis-server)', () => {
  let redis: LocalServer;
  let app: InProcessApp;

  beforeAll(async () => {
    redis = await startRedisServer();
    // RATE_LIMIT_RPS=1: a bucket of one token refilled each second, so two quick requests are 401 then 429.
    app = await startInProcess({ transport: koaTransport, backend: 'real', env: { REDIS_ADDR: `127.0.0.1:${redis.port}`, RATE_LIMIT_STORE: 'redis', RATE_LIMIT_RPS: '1' } });
  });

  afterAll(async () => {
    await app?.stop();
    await redis?.stop();
  });

  it('limits through Redis, falls back to the local bucket while Redis is down, and returns to Redis after', async () => {
    const before = await statusesOf(app, 2);
    expect(before.statuses).toStrictEqual([401, 429]);
    expect(before.events.map((e) => e.source)).toStrictEqual(['shared', 'shared']);

    await redis.kill();
    const during = await statusesOf(app, 3);
    // Not closed: the local bucket admits its first request. Not open: it refuses beyond its budget.
    expect(during.statuses[0]).toBe(401);
    expect(during.statuses.slice(1)).toContain(429);
    expect(during.events.map((e) => e.source)).toStrictEqual(['local', 'local', 'local']);
    const warned = app.logs.find('rate limit: shared store unavailable, limiting per process');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 'warn' });

    await redis.start();
    await untilDecidedBy(app, 'shared');
    expect(app.logs.find('rate limit: shared store answers again')).toHaveLength(1);
    console.log(`redis outage: before ${before.statuses.join(',')}; during ${during.statuses.join(',')} (local bucket); after restart decided by Redis again`);
  });
});

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
