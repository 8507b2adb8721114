import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresCredentialStore } from '../../src/adapters/postgres/postgres-credential-store.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/postgres-database.ts';
import { loadMigrations } from '../../src/adapters/postgres/migrations.ts';
import { PostgresOrderRepository } from '../../src/adapters/postgres/postgres-order-repository.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import { credentialStoreContract } from './credential-store.contract.ts';
import { listPlanContract } from './list-plan.contract.ts';
import { orderRepositoryContract } from './order-repository.contract.ts';
import { outboxContract } from './outbox.contract.ts';
import { captureLogger, outboxOn, postgresConfig } from './postgres-harness.ts';

/** Every migration file, in order (001_init, 003_outbox_idempotency, …). */
const VERSIONS = (await loadMigrations()).map((m) => m.version);

/**
 * The unmodified pg Pool talks to PGlite through pglite-socket. One PGlite per file: each costs
 * ~2-4 s and ~400 MB. Every socket connection shares PGlite's single session, so the advisory lock
 * is re-entrant there (see migrations.ts) and SET search_path is session-wide (fine: one schema here).
 */
const POOL_SIZE = 4;
let pglite: PGlite;
let server: PGLiteSocketServer;
let db: PostgresDatabase;
const log = captureLogger();

beforeAll(async () => {
  pglite = await PGlite.create();
  server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: POOL_SIZE + 4 });
  await server.start();
  const config = postgresConfig(`postgres://postgres:pglite-pw@${server.getServerConn()}/postgres`, {
    schema: 'orders_pglite',
    poolSize: POOL_SIZE,
    // One session under every socket connection: a statement prepared on one would clash on the next.
    preparedStatements: false,
  });
  db = new PostgresDatabase(config, log.logger);
  await db.init();
}, 60_000);

afterAll(async () => {
  await db?.stop();
  await server?.stop();
  await pglite?.close();
});

orderRepositoryContract('pglite', () => new PostgresOrderRepository(db));
listPlanContract('pglite', () => db);
outboxContract('pglite', () => outboxOn(db));
credentialStoreContract('pglite', () => new PostgresCredentialStore(db));

describe('PostgresDatabase on PGlite', () => {
  it('created the tables in the configured schema and recorded the migration', async () => {
    const { rows } = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'orders_pglite' ORDER BY table_name",
    );
    expect(rows.map((r) => r.table_name)).toEqual(['idempotency_keys', 'order_outbox', 'orders', 'schema_migrations', 'users']);
    expect((await db.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual(VERSIONS.map((version) => ({ version })));
  });

  it('re-running migrations is a no-op, also when concurrent (advisory lock is re-entrant here)', async () => {
    expect(await Promise.all([db.migrate(), db.migrate()])).toEqual([[], []]);
    expect((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).toEqual([{ n: VERSIONS.length }]);
  });

  it('CHECK constraints reject what the domain should have refused, as an internal error', async () => {
    const repo = new PostgresOrderRepository(db);
    const base: Order = { id: randomUUID(), userId: randomUUID(), item: 'x', quantity: 1, status: 'pending', createdAt: new Date() };
    await expect(repo.insert({ ...base, quantity: 0 })).rejects.toThrow(/orders_quantity_check.*SQLSTATE 23514/);
    await expect(repo.insert({ ...base, quantity: 0 })).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(repo.insert({ ...base, status: 'shipped' as 'pending' })).rejects.toThrow(/orders_status_check/);
    expect(await repo.findById(base.id)).toBeUndefined();
  });

  it('health resolves while the server is up', async () => {
    await expect(db.health()).resolves.toBeUndefined();
  });

  // Last: takes the server away.
  it('survives idle connections losing the server, then health rejects without secrets', async () => {
    // Fill the pool with idle clients first.
    await Promise.all(Array.from({ length: POOL_SIZE }, () => db.query('SELECT 1')));
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const error = await db.health().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect(String((error as Error).message)).not.toContain('pglite-pw');
    expect(log.lines().some((l) => l.msg === 'database: idle connection lost')).toBe(true);
    expect(JSON.stringify(log.lines())).not.toContain('pglite-pw');
  });
});
