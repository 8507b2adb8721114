// Rule-tagged checks of configuration (spec 8.1) and the constants adapters read from it.
import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { natsConfigFromEnv } from '../adapters/nats/config.ts';
import { NatsEventBus } from '../adapters/nats/event-bus.ts';
import { redisConfigFromEnv } from '../adapters/redis/connection.ts';
import { postgresConfigFromEnv } from '../adapters/postgres/config.ts';
import { realBackendConfig } from '../composition/real-backends.ts';
import { startService } from '../composition/start-service.ts';
import { stdlibTransport } from '../transports/stdlib/server.ts';
import { ORDER_PLACED_SUBJECT } from '../domain/order-placed.ts';
import { createLogger } from '../observability/logger.ts';
import { TokenService } from '../service/token-service.ts';
import { ConfigError, type Env } from './env.ts';
import { loadServiceConfig } from './service.ts';

const SECRET = 'x'.repeat(32);
const REAL_ENV: Env = {
  POSTGRES_DSN: 'postgres://postgres:pw-hunter2@127.0.0.1:1/test',
  REDIS_ADDR: '127.0.0.1:1',
  NATS_URL: 'nats://127.0.0.1:1',
};
const logger = createLogger('error', new LogCapture());

async function failure(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not fail');
}

describe('configuration rules (spec 8.1)', () => {
  it('[CONFIG-defaults, LIMIT-listen-defaults, LIMIT-rate, LIMIT-token-lifetime, LIMIT-session-recent, CONFIG-session-vars, CONFIG-own-vars] defaults and variables', () => {
    // The service's own section needs no backend variable: each adapter reads its own; empty values mean the default.
    const config = loadServiceConfig({ JWT_SECRET: SECRET }, { embedded: false });
    expect(config).toEqual({
      logLevel: 'info',
      httpAddr: { host: undefined, port: 8080 },
      // Our deviation from spec 8.1's `:8081` (LIMIT-listen-defaults): the admin listener stays private unless configured.
      adminAddr: { host: '127.0.0.1', port: 8081 },
      tokens: { secret: SECRET, expiryMs: 3_600_000, generated: false },
      otlpEndpoint: '',
      rateLimitRps: 50,
      rateLimitStore: 'memory',
      trustProxy: [],
      sessionRecent: 10,
      maxConnections: 1024,
      tls: undefined,
    });
    const empty = {
      HTTP_ADDR: '',
      ADMIN_ADDR: '',
      JWT_EXPIRY: '',
      LOG_LEVEL: '',
      OTLP_ENDPOINT: '',
      RATE_LIMIT_RPS: '',
      RATE_LIMIT_STORE: '',
      TRUST_PROXY: '',
      SESSION_RECENT: '',
      HTTP_MAX_CONNECTIONS: '',
    };
    expect(loadServiceConfig({ JWT_SECRET: SECRET, ...empty }, { embedded: false })).toEqual(config);
    const set = loadServiceConfig(
      {
        JWT_SECRET: SECRET,
        SESSION_RECENT: '4',
        RATE_LIMIT_RPS: '7',
        JWT_EXPIRY: '30m',
        HTTP_ADDR: ':9000',
        ADMIN_ADDR: '127.0.0.1:9001',
        HTTP_MAX_CONNECTIONS: '12',
      },
      { embedded: false },
    );
    expect([set.sessionRecent, set.rateLimitRps, set.tokens.expiryMs, set.httpAddr.port, set.adminAddr.port, set.maxConnections]).toEqual([
      4, 7, 1_800_000, 9000, 9001, 12,
    ]);
  });

  it('[CONFIG-required, LIFE-3-missing-env, CONFIG-no-secret-echo, CONFIG-own-vars] a missing variable is a ConfigError naming it, never echoing a secret', async () => {
    for (const env of [{}, { JWT_SECRET: '' }]) {
      const missing = await failure(() => loadServiceConfig(env, { embedded: false }));
      expect(missing).toBeInstanceOf(ConfigError);
      expect(missing.message).toBe('config: missing required variable JWT_SECRET');
    }
    for (const name of ['POSTGRES_DSN', 'REDIS_ADDR', 'NATS_URL']) {
      const error = await failure(() => realBackendConfig({ ...REAL_ENV, [name]: undefined }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toBe(`config: missing required variable ${name}`);
      expect(error.message).not.toContain('hunter2');
    }
    expect((await failure(() => new TokenService('hunter2-short', 1000))).message).not.toContain('hunter2');
  });

  it('[CONFIG-formats, CONFIG-no-secret-echo] malformed values are ConfigErrors that do not echo the value', async () => {
    for (const env of [
      { ...REAL_ENV, REDIS_ADDR: 'redis://:pw-hunter2@127.0.0.1:6379' },
      { ...REAL_ENV, NATS_URL: 'user:pw-hunter2@127.0.0.1:4222' },
    ]) {
      const error = await failure(() => realBackendConfig(env));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).not.toContain('hunter2');
    }
    for (const env of [
      { JWT_SECRET: SECRET, OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      { JWT_SECRET: SECRET, JWT_EXPIRY: 'soon' },
    ]) {
      expect(await failure(() => loadServiceConfig(env, { embedded: false }))).toBeInstanceOf(ConfigError);
    }
    expect(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:4222' }).servers).toHaveLength(1);
  });

  it('[CONFIG-formats, CONFIG-no-secret-echo] POSTGRES_DSN is a postgres:// URL, checked at configuration time, never echoed', async () => {
    for (const dsn of [
      'postgres://u:pw@db.internal:5432/orders',
      'postgresql://u@127.0.0.1/orders',
      'postgres:///orders?host=/run/postgresql',
    ]) {
      expect(postgresConfigFromEnv({ POSTGRES_DSN: dsn }).dsn).toBe(dsn);
    }
    // pg takes anything: `localhost` alone failed only at connect time, as `getaddrinfo ENOTFOUND base`.
    for (const dsn of [
      'localhost',
      'db.internal:5432',
      'user:pw-hunter2@localhost/orders',
      'mysql://u:pw-hunter2@h/db',
      'postgres:db',
      'postgres://u:pw-hunter2@h:99999/db',
    ]) {
      const error = await failure(() => postgresConfigFromEnv({ POSTGRES_DSN: dsn }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toBe('config: POSTGRES_DSN must be a URL such as postgres://user@host:5432/db');
    }
  });

  it('[CONFIG-all-at-once, CONFIG-required, CONFIG-no-secret-echo] start-up reports every missing or invalid variable in one error, echoing none', async () => {
    const run = (env: Env) =>
      failure(() => startService({ serviceName: 'orders-config-test', transport: stdlibTransport, env, logger, embedded: false }));
    const none = await run({});
    expect(none).toBeInstanceOf(ConfigError);
    expect(none.message).toBe('config: missing required variables JWT_SECRET, POSTGRES_DSN, REDIS_ADDR, NATS_URL');
    const wrong = await run({
      JWT_SECRET: 'pw-hunter2-short',
      JWT_EXPIRY: 'soon',
      HTTP_ADDR: '8080',
      RATE_LIMIT_RPS: '0',
      POSTGRES_DSN: 'pw-hunter2@localhost',
      REDIS_ADDR: 'redis://:pw-hunter2@127.0.0.1:6379',
    });
    expect(wrong).toBeInstanceOf(ConfigError);
    expect(wrong.message).toBe(
      [
        'config: missing required variable NATS_URL',
        'HTTP_ADDR must be host:port or :port',
        'JWT_SECRET must be at least 32 bytes',
        'JWT_EXPIRY must be a duration such as 30m or 2h',
        'RATE_LIMIT_RPS must be a positive integer',
        'POSTGRES_DSN must be a URL such as postgres://user@host:5432/db',
        'REDIS_ADDR must be host:port without a scheme (for example 127.0.0.1:6379, not redis://...)',
      ].join('; '),
    );
    expect(wrong.message).not.toContain('hunter2');
    // --embedded needs no backend variable, and a missing JWT_SECRET is generated: only the service's own problems.
    const embedded = await failure(() =>
      startService({
        serviceName: 'orders-config-test',
        transport: stdlibTransport,
        env: { SESSION_RECENT: 'x', TRUST_PROXY: 'nope' },
        logger,
        embedded: true,
      }),
    );
    expect(embedded.message).toBe(
      'config: TRUST_PROXY entry 1 must be an IP address or CIDR such as 10.0.0.0/8; SESSION_RECENT must be a positive integer',
    );
  });

  it('[SVC-cache-ttl, SVC-cache-aside] cache entries live five minutes (Redis TTL and the fake alike)', async () => {
    expect(redisConfigFromEnv({ REDIS_ADDR: '127.0.0.1:6379' }).ttlSeconds).toBe(300);
    let now = Date.parse('2030-01-01T00:00:00Z');
    const cache = new MemoryOrderCache({ clock: { now: () => new Date(now) } });
    const order = {
      id: '6f1c1f7e-0000-4000-8000-000000000001',
      userId: 'u',
      item: 'x',
      quantity: 1,
      status: 'pending' as const,
      createdAt: new Date(now),
    };
    await cache.set(order);
    now += 299_000;
    expect(await cache.get(order.id)).toBeDefined();
    now += 1_000;
    expect(await cache.get(order.id)).toBeUndefined();
  });

  it('[EVT-6-subject-payload] order placed events go to orders.placed', () => {
    expect(ORDER_PLACED_SUBJECT).toBe('orders.placed');
    expect(new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), logger).subject).toBe('orders.placed');
  });
});
