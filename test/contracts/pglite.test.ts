import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { postgresDatabaseContract, VERSIONS } from './postgres-database.contract.ts';
import { captureLogger, startPgliteDatabase, type PgliteDatabase } from './postgres-harness.ts';

/** The database contract on PGlite (startPgliteDatabase: the worker's PGlite, a clean database for the file). */
const POOL_SIZE = 4;
let pglite: PgliteDatabase | undefined;
let db: PostgresDatabase;
const log = captureLogger();

beforeAll(async () => {
  pglite = await startPgliteDatabase('orders_pglite', POOL_SIZE, log.logger);
  db = pglite.db;
});

afterAll(async () => {
  await pglite?.stop();
});

postgresDatabaseContract('pglite', () => db);

// An idle connection lost (logged, not fatal) is postgres-real's; health rejecting without the password, postgres-failures'.
describe('PostgresDatabase on PGlite', () => {
  it('re-running migrations is a no-op, also when concurrent (advisory lock is re-entrant here)', async () => {
    expect(await Promise.all([db.migrate(), db.migrate()])).toEqual([[], []]);
    expect((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).toEqual([{ n: VERSIONS.length }]);
  });
});
