/**
 * PostgreSQL, Redis and NATS adapters, each reading its own variables (spec 8.1). Every config is validated
 * before anything connects, so a missing variable fails start-up (spec 3.4 rule 3), all of them at once;
 * connecting happens in each component's init.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { readAll, type Env } from '../config/env.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../observability/logger.ts';
import { natsConfigFromEnv, type NatsConfig } from '../adapters/nats/config.ts';
import { NatsEventBus, type NatsEventBusOptions } from '../adapters/nats/event-bus.ts';
import { postgresConfigFromEnv, type PostgresConfig } from '../adapters/postgres/config.ts';
import { PostgresCredentialStore } from '../adapters/postgres/credential-store.ts';
import { PostgresDatabase } from '../adapters/postgres/database.ts';
import { PostgresOrderRepository } from '../adapters/postgres/order-repository.ts';
import { PostgresOutbox } from '../adapters/postgres/outbox.ts';
import { redisConfigFromEnv, type RedisConfig } from '../adapters/redis/connection.ts';
import { RedisOrderCache } from '../adapters/redis/order-cache.ts';
import { DEFAULT_RATE_LIMIT_KEY_PREFIX, RedisRateLimitStore } from '../adapters/redis/rate-limit-store.ts';
import type { Backends } from './backends.ts';
import type { SpeedRing } from './speed-hooks.ts';

/**
 * Test isolation on shared servers: own schema, cache key prefix and subject, so parallel runs never
 * collide and nothing is left behind. Production passes nothing.
 */
export interface RealBackendIsolation {
  readonly schema?: string;
  readonly uniqueSuffix?: string;
  readonly dropSchemaOnStop?: boolean;
}

export interface RealBackendConfig {
  readonly postgres: PostgresConfig;
  readonly redis: RedisConfig;
  readonly nats: NatsConfig;
}

/** POSTGRES_DSN, REDIS_ADDR and NATS_URL, each read by its adapter; every problem in one ConfigError (rule CONFIG-all-at-once). */
export function realBackendConfig(env: Env): RealBackendConfig {
  return readAll({ postgres: () => postgresConfigFromEnv(env), redis: () => redisConfigFromEnv(env), nats: () => natsConfigFromEnv(env) });
}

export async function createRealBackends(
  { postgres, redis, nats }: RealBackendConfig,
  logger: Logger,
  isolation: RealBackendIsolation = {},
  speed: Pick<SpeedRing, 'orderRepository' | 'streamPublisher'> = {},
): Promise<Backends> {
  const suffix = isolation.uniqueSuffix;
  const database = new PostgresDatabase({ ...postgres, schema: isolation.schema ?? postgres.schema }, logger);
  const keyPrefix = suffix === undefined ? redis.keyPrefix : `${redis.keyPrefix}${suffix}:`;
  const cache = new RedisOrderCache({ ...redis, keyPrefix }, logger);
  const bus = new NatsEventBus(nats, logger, {
    ...streamNames(suffix, isolation.schema ?? postgres.schema),
    streamPublisher: speed.streamPublisher,
  });
  // The relay and the ledger hold a transaction across a broker round trip: their own small pool, so
  // creates never queue behind them (POST /orders ≥ 50% of a bare INSERT, bench/run.ts).
  const outbox = new PostgresOutbox(database.background);
  const components: Component[] = [database, cache, bus];
  if (isolation.schema !== undefined && isolation.dropSchemaOnStop) {
    // First in the list, so it stops last, after the pool has ended.
    components.unshift(schemaDropper(postgres.dsn, isolation.schema));
  }
  if (suffix !== undefined) components.unshift(keyCleaner(redis.host, redis.port, keyPrefix));
  return {
    repository: speed.orderRepository?.(database) ?? new PostgresOrderRepository(database),
    credentials: new PostgresCredentialStore(database),
    cache,
    publisher: bus,
    subscriber: bus,
    outbox,
    ledger: outbox,
    components,
    metrics: { pool: database, connections: [cache, bus] },
    // Replicas sharing a suffix (tests) share their budgets, as production replicas do without one.
    sharedRateLimit: (bucket) =>
      new RedisRateLimitStore(
        {
          host: redis.host,
          port: redis.port,
          ...bucket,
          keyPrefix: `${DEFAULT_RATE_LIMIT_KEY_PREFIX}${suffix === undefined ? '' : `${suffix}:`}`,
        },
        logger,
      ),
  };
}

/**
 * One outbox, one stream: the notifier's ledger lives in the outbox's schema, so a schema of its own
 * (POSTGRES_SCHEMA, tests on shared servers) gets a subject and stream of its own too, and never
 * consumes another schema's events. Isolated test runs get theirs from their suffix, deleted at stop.
 * Production (no schema, no suffix) uses orders.placed and stream ORDERS.
 */
function streamNames(suffix: string | undefined, schema: string | undefined): NatsEventBusOptions {
  if (suffix !== undefined) return { subject: `orders.placed.${suffix}`, stream: `ORDERS_${suffix}`, deleteStreamOnStop: true };
  if (schema !== undefined) return { subject: `orders.placed.${schema}`, stream: `ORDERS_${schema}` };
  return {};
}

function schemaDropper(dsn: string, schema: string): Component {
  return {
    name: 'schema-dropper',
    async stop() {
      const client = new pg.Client({ connectionString: dsn });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

function keyCleaner(host: string, port: number, prefix: string): Component {
  return {
    name: 'cache-key-cleaner',
    async stop() {
      const client = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
      await client.connect();
      try {
        for await (const keys of client.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
          if (keys.length > 0) await client.del(...keys);
        }
      } finally {
        client.disconnect();
      }
    },
  };
}
