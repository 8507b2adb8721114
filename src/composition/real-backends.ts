import { Redis } from 'ioredis';
import pg from 'pg';
import type { Env } from '../config/env.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../observability/logger.ts';
import { natsConfigFromEnv } from '../adapters/nats/nats-config.ts';
import { NatsEventBus } from '../adapters/nats/nats-event-bus.ts';
import { postgresConfigFromEnv } from '../adapters/postgres/postgres-config.ts';
import { PostgresCredentialStore } from '../adapters/postgres/postgres-credential-store.ts';
import { PostgresDatabase } from '../adapters/postgres/postgres-database.ts';
import { PostgresOrderRepository } from '../adapters/postgres/postgres-order-repository.ts';
import { redisConfigFromEnv } from '../adapters/redis/redis-config.ts';
import { RedisOrderCache } from '../adapters/redis/redis-order-cache.ts';
import type { Backends } from './backends.ts';

/**
 * Test isolation on shared servers: own schema, cache key prefix and subject, so parallel runs never
 * collide and nothing is left behind. Production passes nothing.
 */
export interface RealBackendIsolation {
  readonly schema?: string;
  readonly uniqueSuffix?: string;
  readonly dropSchemaOnStop?: boolean;
}

/**
 * PostgreSQL, Redis and NATS adapters, each reading its own variables (spec 8.1). Every config is
 * validated before anything connects, so a missing variable fails construction (spec 3.4 rule 3);
 * connecting happens in each component's init.
 */
export async function createRealBackends(env: Env, logger: Logger, isolation: RealBackendIsolation = {}): Promise<Backends> {
  const postgres = postgresConfigFromEnv(env);
  const redis = redisConfigFromEnv(env);
  const nats = natsConfigFromEnv(env);
  const suffix = isolation.uniqueSuffix;
  const database = new PostgresDatabase({ ...postgres, schema: isolation.schema ?? postgres.schema }, logger);
  const keyPrefix = suffix === undefined ? redis.keyPrefix : `${redis.keyPrefix}${suffix}:`;
  const cache = new RedisOrderCache({ ...redis, keyPrefix }, logger);
  const bus = new NatsEventBus(nats, logger, suffix === undefined ? {} : { subject: `orders.placed.${suffix}` });
  const components: Component[] = [database, cache, bus];
  if (isolation.schema !== undefined && isolation.dropSchemaOnStop) {
    // First in the list, so it stops last, after the pool has ended.
    components.unshift(schemaDropper(postgres.dsn, isolation.schema));
  }
  if (suffix !== undefined) components.unshift(keyCleaner(redis.host, redis.port, keyPrefix));
  return {
    repository: new PostgresOrderRepository(database),
    credentials: new PostgresCredentialStore(database),
    cache,
    publisher: bus,
    subscriber: bus,
    components,
  };
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
