import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/adapters/postgres/postgres-database.ts';
import { postgresDatabaseContract, VERSIONS } from './postgres-database.contract.ts';
import { captureLogger, postgresConfig } from './postgres-harness.ts';

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

postgresDatabaseContract('pglite', () => db);

// An idle connection lost (logged, not fatal) is postgres-real's; health rejecting without the password, postgres-failures'.
describe('PostgresDatabase on PGlite', () => {
  it('re-running migrations is a no-op, also when concurrent (advisory lock is re-entrant here)', async () => {
    expect(await Promise.all([db.migrate(), db.migrate()])).toEqual([[], []]);
    expect((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows).toEqual([{ n: VERSIONS.length }]);
  });
});
