// The real adapters' composition on the shared servers: isolation (schema, key prefix, stream), what each
// part leaves behind at stop, and the names production gets without isolation.
import { randomBytes, randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../config/env.ts';
import type { Backends } from './backends.ts';
import { createRealBackends, realBackendConfig, type RealBackendIsolation } from './real-backends.ts';
import type { NatsEventBus } from '../adapters/nats/event-bus.ts';
import { natsConfigFromEnv } from '../adapters/nats/config.ts';
import { redisConfigFromEnv } from '../adapters/redis/connection.ts';
import { registerServiceMetrics } from '../observability/metrics.ts';
import { createLogger } from '../observability/logger.ts';
import { sampleOrder } from '../../test/contracts/order-cache.contract.ts';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { redisConnectionsOpenedBy } from '../../test/support/redis-connections.ts';
import { realBackendsConfigured } from '../../test/support/in-process-app.ts';

/**
 * createRealBackends on the real servers (POSTGRES_DSN, REDIS_ADDR, NATS_URL): what each isolation option
 * (schema, uniqueSuffix, dropSchemaOnStop) gives on the servers, and what a production call (none) names.
 * Every run has its own schema, key prefix and stream, and removes them; the production stream ORDERS is
 * never touched (the production-like call is checked without a broker connection).
 */
const configured = realBackendsConfigured();

describe.skipIf(!configured)('createRealBackends on the real servers (isolation and production names)', () => {
  const env: Env = { POSTGRES_DSN: process.env['POSTGRES_DSN'], REDIS_ADDR: process.env['REDIS_ADDR'], NATS_URL: process.env['NATS_URL'] };
  const logger = createLogger('error', new LogCapture());
  let sql: pg.Client;
  let redis: Redis;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  /** Whatever a test leaves on the servers if it fails half-way; removed in afterAll. */
  const leftKeys: string[] = [];
  const leftSchemas: string[] = [];
  const leftStreams: string[] = [];

  beforeAll(async () => {
    sql = new pg.Client({ connectionString: env['POSTGRES_DSN'] });
    await sql.connect();
    const { host, port } = redisConfigFromEnv(env);
    redis = new Redis({ host, port });
    nc = await connect({ servers: [...natsConfigFromEnv(env).servers] });
    jsm = await jetstreamManager(nc);
  });

  afterAll(async () => {
    for (const schema of leftSchemas) await sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    if (leftKeys.length > 0) await redis.del(...leftKeys);
    for (const stream of leftStreams) await jsm.streams.delete(stream).catch(() => undefined);
    await sql.end();
    redis.disconnect();
    await nc.close();
  });

  const id = (): string => randomBytes(6).toString('hex');

  /** Initialises every component in order, as the runner does (lifecycle/runner.ts). */
  async function started(isolation: RealBackendIsolation): Promise<Backends> {
    if (isolation.schema !== undefined) leftSchemas.push(isolation.schema);
    const backends = await createRealBackends(realBackendConfig(env), logger, isolation);
    // Checked before anything connects: an isolated run must never reach the production stream.
    expect((backends.publisher as NatsEventBus).stream).not.toBe('ORDERS');
    for (const component of backends.components) await component.init?.();
    return backends;
  }

  /** Stops them in reverse order, as the runner does; a failing stop fails the test. */
  async function stopped(backends: Backends): Promise<void> {
    for (const component of [...backends.components].reverse()) await component.stop?.();
  }

  async function schemaExists(schema: string): Promise<boolean> {
    const { rows } = await sql.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    return rows.length === 1;
  }

  async function tablesIn(schema: string): Promise<string[]> {
    const { rows } = await sql.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
      schema,
    ]);
    return rows.map((row) => row.table_name);
  }

  async function streamExists(name: string): Promise<boolean> {
    try {
      await jsm.streams.info(name);
      return true;
    } catch (error) {
      if (/stream not found/.test(String(error))) return false;
      throw error;
    }
  }

  async function keysUnder(prefix: string): Promise<string[]> {
    const found: string[] = [];
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) found.push(...keys);
    return found;
  }

  it('[LIFE-4-shutdown, EVT-6-subject-payload] schema, suffix and dropSchemaOnStop: own schema, keys and stream while running, all removed at stop, the schema last', async () => {
    const schema = `t_${id()}`;
    const suffix = id();
    leftStreams.push(`ORDERS_${suffix}`);
    const backends = await started({ schema, uniqueSuffix: suffix, dropSchemaOnStop: true });
    // The key cleaner and the schema dropper come first, so they stop last, after the pool has ended.
    expect(backends.components.map((component) => component.name)).toEqual([
      'cache-key-cleaner',
      'schema-dropper',
      'database',
      'cache',
      'publisher',
    ]);
    // The migrations ran in the isolation schema.
    expect(await tablesIn(schema)).toContain('orders');
    // Cache keys carry the suffix after the cache's own prefix: more than one SCAN batch of them (500 a batch).
    const orders = Array.from({ length: 600 }, () => sampleOrder());
    await Promise.all(orders.map((order) => backends.cache.set(order)));
    leftKeys.push(...orders.map((order) => `orders:order:${suffix}:${order.id}`));
    expect(await redis.exists(`orders:order:${suffix}:${orders[0]!.id}`)).toBe(1);
    expect(await keysUnder(`orders:order:${suffix}:`)).toHaveLength(600);
    // The bus publishes on a subject and stream of the suffix, which exists on the server.
    const bus = backends.publisher as NatsEventBus;
    expect([bus.subject, bus.stream]).toEqual([`orders.placed.${suffix}`, `ORDERS_${suffix}`]);
    expect((await jsm.streams.info(`ORDERS_${suffix}`)).config.subjects).toEqual([`orders.placed.${suffix}`]);

    await stopped(backends);
    expect(await schemaExists(schema)).toBe(false);
    expect(await keysUnder(`orders:order:${suffix}:`)).toEqual([]);
    expect(await streamExists(`ORDERS_${suffix}`)).toBe(false);
  });

  it('[LIFE-4-shutdown] the schema dropper and the key cleaner release their own connections at stop', async () => {
    const schema = `t_${id()}`;
    const suffix = id();
    leftStreams.push(`ORDERS_${suffix}`);
    const backends = await started({ schema, uniqueSuffix: suffix, dropSchemaOnStop: true });
    await backends.cache.set(sampleOrder());
    // The Redis connections the stop opens (the key cleaner's), by their server-side ids.
    const ids = await redisConnectionsOpenedBy(() => stopped(backends));
    expect(await schemaExists(schema)).toBe(false);
    expect(ids).toHaveLength(1);
    await until(
      async () => (await redis.call('CLIENT', 'LIST', 'ID', String(ids[0]))) === '',
      'the key cleaner to close its connection',
      1_000,
    );
    // The dropper's session ends too (its last statement would stay in pg_stat_activity while it idles).
    const dropper = async (): Promise<number> =>
      (await sql.query('SELECT 1 FROM pg_stat_activity WHERE query = $1', [`DROP SCHEMA IF EXISTS "${schema}" CASCADE`])).rows.length;
    await until(async () => (await dropper()) === 0, 'the schema dropper to end its session', 1_000);
  });

  it('[LIFE-4-shutdown] the key cleaner finding nothing to remove stops cleanly', async () => {
    const suffix = id();
    leftStreams.push(`ORDERS_${suffix}`);
    const backends = await started({ uniqueSuffix: suffix });
    // A cleaner whose scan finds no key at all: an empty batch is skipped, not sent as a DEL of nothing.
    await expect(stopped(backends)).resolves.toBeUndefined();
    expect(await streamExists(`ORDERS_${suffix}`)).toBe(false);
  });

  it('[EVT-6-subject-payload] a suffix without a schema: default database schema, no dropper, the suffix names keys and stream', async () => {
    const suffix = id();
    leftStreams.push(`ORDERS_${suffix}`);
    // dropSchemaOnStop without a schema has nothing to drop.
    const backends = await started({ uniqueSuffix: suffix, dropSchemaOnStop: true });
    try {
      expect(backends.components.map((component) => component.name)).toEqual(['cache-key-cleaner', 'database', 'cache', 'publisher']);
      const order = sampleOrder();
      await backends.cache.set(order);
      leftKeys.push(`orders:order:${suffix}:${order.id}`);
      expect(await redis.exists(`orders:order:${suffix}:${order.id}`)).toBe(1);
      expect(await streamExists(`ORDERS_${suffix}`)).toBe(true);
    } finally {
      await stopped(backends);
    }
    expect(await keysUnder(`orders:order:${suffix}:`)).toEqual([]);
  });

  it('[EVT-6-subject-payload] a schema without a suffix: the schema names subject and stream, kept at stop, with the schema unless dropSchemaOnStop', async () => {
    const schema = `t_${id()}`;
    const stream = `ORDERS_${schema}`;
    leftStreams.push(stream);
    const backends = await started({ schema });
    const order = sampleOrder();
    try {
      expect(backends.components.map((component) => component.name)).toEqual(['database', 'cache', 'publisher']);
      expect(await tablesIn(schema)).toContain('orders');
      const bus = backends.publisher as NatsEventBus;
      expect([bus.subject, bus.stream]).toEqual([`orders.placed.${schema}`, stream]);
      expect((await jsm.streams.info(stream)).config.subjects).toEqual([`orders.placed.${schema}`]);
      // No suffix: the cache's own key prefix (a random order id, removed below).
      leftKeys.push(`orders:order:${order.id}`);
      await backends.cache.set(order);
      expect(await redis.exists(`orders:order:${order.id}`)).toBe(1);
    } finally {
      await stopped(backends);
    }
    // Not isolated by a suffix: nothing of it is removed at stop.
    expect(await schemaExists(schema)).toBe(true);
    expect(await streamExists(stream)).toBe(true);
    expect(await redis.exists(`orders:order:${order.id}`)).toBe(1);
  });

  it('[METRICS-service] the scrape reads the pool and the cache and publisher connections of the backends', async () => {
    const suffix = id();
    leftStreams.push(`ORDERS_${suffix}`);
    const backends = await started({ uniqueSuffix: suffix });
    try {
      const registry = new Registry();
      registerServiceMetrics(registry, { counts: () => ({ live: 0, lingering: 0 }) }, backends.metrics);
      const scrape = await registry.metrics();
      expect(scrape).toContain('orders_backend_connected{component="cache"} 1');
      expect(scrape).toContain('orders_backend_connected{component="publisher"} 1');
      // The migration's connection went back to the pool: one idle at least.
      const idle = /^orders_db_pool_connections\{state="idle"\} (\d+)$/m.exec(scrape);
      expect(Number(idle?.[1])).toBeGreaterThanOrEqual(1);
    } finally {
      await stopped(backends);
    }
  });

  it('[LIMIT-rate-store] shared rate-limit stores of one suffix share budgets, under the suffix prefix; another suffix has its own', async () => {
    const [suffix, other] = [id(), id()];
    // The factory needs no component initialised: each store is a component of its own.
    const stores = [suffix, suffix, other].map(async (uniqueSuffix) => {
      const backends = await createRealBackends(realBackendConfig(env), logger, { uniqueSuffix });
      const store = backends.sharedRateLimit!({ rate: 1, burst: 1 });
      await store.init?.();
      return store;
    });
    const [first, second, third] = await Promise.all(stores);
    leftKeys.push(`orders:ratelimit:${suffix}:client`, `orders:ratelimit:${other}:client`);
    try {
      expect((await first!.take('client')).allowed).toBe(true);
      expect(await redis.exists(`orders:ratelimit:${suffix}:client`)).toBe(1);
      // The same suffix: the budget the first spent.
      expect((await second!.take('client')).allowed).toBe(false);
      // Another suffix: a budget of its own.
      expect((await third!.take('client')).allowed).toBe(true);
    } finally {
      await Promise.all([first!.stop?.(), second!.stop?.(), third!.stop?.()]);
    }
  });

  it('[EVT-6-subject-payload, LIMIT-rate-store] no isolation (production): orders.placed on ORDERS, default cache and rate-limit prefixes', async () => {
    const backends = await createRealBackends(realBackendConfig(env), logger);
    expect(backends.components.map((component) => component.name)).toEqual(['database', 'cache', 'publisher']);
    // Read from the bus's settings only: the production stream is never connected to here.
    const bus = backends.publisher as NatsEventBus;
    expect([bus.subject, bus.stream]).toEqual(['orders.placed', 'ORDERS']);
    // The cache alone, with a random order id and client, removed below.
    const cache = backends.components.find((component) => component.name === 'cache')!;
    const order = sampleOrder();
    const client = `test-${randomUUID()}`;
    leftKeys.push(`orders:order:${order.id}`, `orders:ratelimit:${client}`);
    await cache.init?.();
    const store = backends.sharedRateLimit!({ rate: 1, burst: 1 });
    await store.init?.();
    try {
      await backends.cache.set(order);
      expect(await redis.exists(`orders:order:${order.id}`)).toBe(1);
      expect((await store.take(client)).allowed).toBe(true);
      expect(await redis.exists(`orders:ratelimit:${client}`)).toBe(1);
    } finally {
      await store.stop?.();
      await cache.stop?.();
    }
  });
});
