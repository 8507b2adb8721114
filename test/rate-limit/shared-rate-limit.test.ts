import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../../src/adapters/redis/redis-rate-limit-store.ts';
import { redisConfigFromEnv } from '../../src/adapters/redis/redis-config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { TokenBucketLimiter } from '../../src/transports/http/rate-limiter.ts';
import { koaTransport } from '../../src/transports/koa/koa-transport.ts';
import { stdlibTransport } from '../../src/transports/stdlib/stdlib-transport.ts';
import { realBackendsConfigured, startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { countBetweenRefusals, offerLoad, recordDecisions } from './load.ts';

/**
 * Rule LIMIT-rate-store on the real Redis (REDIS_ADDR), prefix-isolated: the shared budget is the
 * in-process token bucket run inside Redis, and two replicas spend from one budget per client.
 */
const configured = realBackendsConfigured();
const RPS = 20;
const SECONDS = 3;

describe.skipIf(!configured)('shared rate limit on the real Redis (RATE_LIMIT_STORE=redis)', () => {
  it('the Redis script decides exactly as the in-process bucket does, step by step (same clock, same requests)', async () => {
    const { host, port } = redisConfigFromEnv(process.env);
    let now = 1_700_000_000_000;
    const clock = (): number => now;
    const shared = new RedisRateLimitStore({ host, port, rate: 5, burst: 5, keyPrefix: `test:ratelimit:${randomBytes(6).toString('hex')}:`, clock }, createLogger('error'));
    const local = new TokenBucketLimiter(5, 5, clock);
    await shared.init();
    try {
      // A pseudo-random walk of gaps (0-700 ms) and three keys: bursts, refusals, partial and full refills.
      let seed = 7;
      const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
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

  describe('two service instances (node:http and Koa) sharing one Redis prefix', () => {
    let replicas: InProcessApp[] = [];
    beforeAll(async () => {
      const uniqueSuffix = randomBytes(6).toString('hex');
      const env = { RATE_LIMIT_STORE: 'redis', RATE_LIMIT_RPS: String(RPS) };
      replicas = await Promise.all(
        [stdlibTransport, koaTransport].map((transport) =>
          startInProcess({ transport, backend: 'real', env, isolation: { schema: `t_${randomBytes(6).toString('hex')}`, uniqueSuffix, dropSchemaOnStop: true } }),
        ),
      );
    });
    afterAll(async () => {
      await Promise.all(replicas.map((replica) => replica.stop()));
    });

    it(`one client at 4 x RATE_LIMIT_RPS across both gets RATE_LIMIT_RPS ± 10% accepted per second`, async () => {
      let statuses: number[] = [];
      const events = await recordDecisions(async () => {
        statuses = await offerLoad(replicas.map((r) => r.baseUrl), 4 * RPS, 4 * RPS * SECONDS);
      });
      expect(events.filter((e) => e.source !== 'shared')).toStrictEqual([]); // every decision came from Redis
      expect(new Set(statuses)).toStrictEqual(new Set([401, 429])); // 401: allowed, then refused by authentication
      const window = countBetweenRefusals(events);
      expect(window, 'no two refusals: the limiter never limited').toBeDefined();
      const { windowMs, accepted, offered } = window as NonNullable<typeof window>;
      const acceptedPerSecond = accepted / (windowMs / 1000);
      const offeredPerSecond = offered / (windowMs / 1000);
      console.log(
        `shared rate limit, RATE_LIMIT_RPS=${RPS}, 2 replicas: ${accepted} accepted of ${offered} offered in ${windowMs.toFixed(0)} ms of Redis time: ` +
          `${acceptedPerSecond.toFixed(2)}/s accepted, ${offeredPerSecond.toFixed(1)}/s offered`,
      );
      expect(windowMs).toBeGreaterThanOrEqual(1_500); // long enough for ±1 request to stay inside 10%
      expect(offeredPerSecond).toBeGreaterThan(2 * RPS); // the client really pressed on the limit
      expect(acceptedPerSecond).toBeGreaterThanOrEqual(RPS * 0.9);
      expect(acceptedPerSecond).toBeLessThanOrEqual(RPS * 1.1);
      // Both replicas answered and both refused: one budget, not one per replica.
      for (const replica of replicas) {
        const own = statuses.filter((_, i) => i % replicas.length === replicas.indexOf(replica));
        expect(own).toContain(429);
        expect(own).toContain(401);
      }
    });
  });
});

describe('control: the per-process store (RATE_LIMIT_STORE=memory) gives each replica its own budget', () => {
  let replicas: InProcessApp[] = [];
  beforeAll(async () => {
    replicas = await Promise.all([stdlibTransport, koaTransport].map((transport) => startInProcess({ transport, env: { RATE_LIMIT_RPS: String(RPS) } })));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
  });

  it('so two replicas admit about twice RATE_LIMIT_RPS for one client: what the shared store exists to prevent', async () => {
    const events = await recordDecisions(async () => {
      await offerLoad(replicas.map((r) => r.baseUrl), 4 * RPS, 4 * RPS * 2);
    });
    expect(events.every((e) => e.source === 'local')).toBe(true);
    const allowed = events.filter((e) => e.decision.allowed).length;
    // Two bursts of RPS at the start alone exceed what one shared budget allows in the same time.
    const spanSeconds = (Math.max(...events.map((e) => e.decision.atMs)) - Math.min(...events.map((e) => e.decision.atMs))) / 1000;
    console.log(`memory store, 2 replicas: ${allowed} allowed in ${spanSeconds.toFixed(2)} s`);
    expect(allowed).toBeGreaterThan(RPS + RPS * spanSeconds * 1.1 + 1);
  });
});
