import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PostgresCredentialStore } from '../../src/adapters/postgres/postgres-credential-store.ts';
import type { PostgresDatabase } from '../../src/adapters/postgres/postgres-database.ts';
import { loadMigrations } from '../../src/adapters/postgres/migrations.ts';
import { PostgresOrderRepository } from '../../src/adapters/postgres/postgres-order-repository.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import { credentialStoreContract } from './credential-store.contract.ts';
import { listPlanContract } from './list-plan.contract.ts';
import { orderRepositoryContract } from './order-repository.contract.ts';
import { outboxContract } from './outbox.contract.ts';
import { PostgresOutbox } from '../../src/adapters/postgres/postgres-outbox.ts';
import { CoalescingOrderRepository } from '../../speed/placement-coalescer.ts';

/** Every migration file, in order (001_init, 003_outbox_idempotency, …). */
export const VERSIONS = (await loadMigrations()).map((m) => m.version);

/**
 * The Postgres adapters on one initialised PostgresDatabase (the real server, or PGlite): every port
 * contract, the migrations it recorded and the constraints the schema holds.
 */
export function postgresDatabaseContract(name: string, database: () => PostgresDatabase): void {
  orderRepositoryContract(name, () => new PostgresOrderRepository(database()));
  listPlanContract(name, database);
  // The plain core: every create in its own transaction.
  outboxContract(name, () => ({ repository: new PostgresOrderRepository(database()), outbox: new PostgresOutbox(database()) }));
  // With the speed ring's repository (speed/placement-coalescer.ts): creates without a key coalesced.
  outboxContract(`${name}, creates coalesced (speed ring)`, () => ({
    repository: new CoalescingOrderRepository(database()),
    outbox: new PostgresOutbox(database()),
  }));
  credentialStoreContract(name, () => new PostgresCredentialStore(database()));

  describe(`PostgresDatabase/${name}`, () => {
    it('init created the tables in its schema and recorded every migration; running them again is a no-op', async () => {
      const db = database();
      const { rows } = await db.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name',
      );
      expect(rows.map((r) => r.table_name)).toEqual(['idempotency_keys', 'order_outbox', 'orders', 'schema_migrations', 'users']);
      expect((await db.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual(
        VERSIONS.map((version) => ({ version })),
      );
      expect(await db.migrate()).toEqual([]);
      expect((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).toEqual([{ n: VERSIONS.length }]);
    });

    it('CHECK constraints reject what the domain should have refused, as an internal error naming the constraint', async () => {
      const repo = new PostgresOrderRepository(database());
      const base: Order = { id: randomUUID(), userId: randomUUID(), item: 'x', quantity: 1, status: 'pending', createdAt: new Date() };
      const error = await repo.insert({ ...base, quantity: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrUnavailable);
      expect((error as Error).message).toMatch(/integrity.*orders_quantity_check.*SQLSTATE 23514/);
      await expect(repo.insert({ ...base, status: 'shipped' as 'pending' })).rejects.toThrow(/orders_status_check/);
      expect(await repo.findById(base.id)).toBeUndefined();
    });

    it('health resolves while the server is up', async () => {
      await expect(database().health()).resolves.toBeUndefined();
    });
  });
}
