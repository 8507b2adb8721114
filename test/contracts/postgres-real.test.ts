import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCredentialStore } from '../../src/adapters/postgres/postgres-credential-store.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/postgres-database.ts';
import { loadMigrations } from '../../src/adapters/postgres/migrations.ts';
import { PostgresOrderRepository } from '../../src/adapters/postgres/postgres-order-repository.ts';
import { ErrConflict, ErrUnavailable } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import { credentialStoreContract } from './credential-store.contract.ts';
import { listPlanContract } from './list-plan.contract.ts';
import { orderRepositoryContract } from './order-repository.contract.ts';
import { outboxContract } from './outbox.contract.ts';
import { captureLogger, dropSchemas, outboxOn, postgresConfig, testSchemaName } from './postgres-harness.ts';

/** Every migration file, in order (001_init, 003_outbox_idempotency, …). */
const VERSIONS = (await loadMigrations()).map((m) => m.version);

const DSN = process.env.POSTGRES_DSN;

/** Each run works in its own schema t_<random>, dropped afterwards, so runs can share the server. */
describe.skipIf(!DSN)('PostgreSQL adapters on the real server', () => {
  const dsn = DSN as string;
  const schemas: string[] = [];
  const log = captureLogger();
  const databases: PostgresDatabase[] = [];
  function database(schema: string, overrides: Parameters<typeof postgresConfig>[1] = {}): PostgresDatabase {
    if (!schemas.includes(schema)) schemas.push(schema);
    const db = new PostgresDatabase(postgresConfig(dsn, { schema, ...overrides }), log.logger);
    databases.push(db);
    return db;
  }

  let db: PostgresDatabase;
  beforeAll(async () => {
    db = database(testSchemaName());
    await db.init();
  });

  afterAll(async () => {
    for (const d of databases) await d.stop();
    await dropSchemas(dsn, schemas);
  });

  orderRepositoryContract('postgres', () => new PostgresOrderRepository(db));
  listPlanContract('postgres', () => db);
  outboxContract('postgres', () => outboxOn(db));
  credentialStoreContract('postgres', () => new PostgresCredentialStore(db));

  describe('migrations', () => {
    it('init created the tables in the test schema and recorded every migration', async () => {
      const { rows } = await db.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name',
      );
      expect(rows.map((r) => r.table_name)).toEqual(['idempotency_keys', 'order_outbox', 'orders', 'schema_migrations', 'users']);
      expect((await db.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual(VERSIONS.map((version) => ({ version })));
    });

    it('running them again is a no-op', async () => {
      expect(await db.migrate()).toEqual([]);
      await db.init();
      expect((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).toEqual([{ n: VERSIONS.length }]);
    });

    it('two replicas migrating a fresh schema at once both succeed, and it is applied once', async () => {
      const schema = testSchemaName();
      const replicas = [database(schema), database(schema), database(schema)];
      const results = await Promise.all(replicas.map((r) => r.migrate()));
      expect(results.flat().sort()).toEqual(VERSIONS);
      expect((await replicas[0]!.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual(VERSIONS.map((version) => ({ version })));
      await Promise.all(replicas.map((r) => r.init()));
    });
  });

  describe('constraints', () => {
    const order = (): Order => ({ id: randomUUID(), userId: randomUUID(), item: 'x', quantity: 1, status: 'pending', createdAt: new Date() });

    it('CHECK rejects quantity 0 as an internal (not validation) error naming the constraint', async () => {
      const repo = new PostgresOrderRepository(db);
      const error = await repo.insert({ ...order(), quantity: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrUnavailable);
      expect((error as Error).message).toMatch(/integrity.*orders_quantity_check.*SQLSTATE 23514/);
    });

    it("CHECK rejects status 'shipped'", async () => {
      const repo = new PostgresOrderRepository(db);
      const bad = { ...order(), status: 'shipped' as 'pending' };
      await expect(repo.insert(bad)).rejects.toThrow(/orders_status_check/);
      expect(await repo.findById(bad.id)).toBeUndefined();
    });

    it('a duplicate user id is a conflict too', async () => {
      const store = new PostgresCredentialStore(db);
      const id = randomUUID();
      await store.add({ id, username: `a-${id}`, passwordHash: 'h' });
      await expect(store.add({ id, username: `b-${id}`, passwordHash: 'h' })).rejects.toBeInstanceOf(ErrConflict);
    });
  });

  describe('connections', () => {
    it('health resolves while the server is up', async () => {
      await expect(db.health()).resolves.toBeUndefined();
    });

    it('an idle connection killed by the server is logged, not fatal, and the pool recovers', async () => {
      const url = new URL(dsn);
      url.searchParams.set('application_name', `orders_${randomUUID().slice(0, 8)}`);
      const victim = new PostgresDatabase(postgresConfig(url.toString(), { schema: schemas[0], poolSize: 2 }), log.logger);
      databases.push(victim);
      await Promise.all([victim.query('SELECT pg_sleep(0.05)'), victim.query('SELECT pg_sleep(0.05)')]);
      const killed = await db.query<{ n: number }>(
        'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [url.searchParams.get('application_name')],
      );
      expect(killed.rows[0]?.n).toBe(2);
      await expect.poll(() => log.lines().filter((l) => l.msg === 'database: idle connection lost').length).toBeGreaterThanOrEqual(2);
      await expect(victim.health()).resolves.toBeUndefined();
    });

    it('health rejects after the pool is ended', async () => {
      const ended = database(schemas[0]!);
      await ended.init();
      await ended.stop();
      await expect(ended.health()).rejects.toBeInstanceOf(ErrUnavailable);
      await ended.stop(); // idempotent
    });
  });
});
