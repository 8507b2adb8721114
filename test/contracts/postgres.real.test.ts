import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { postgresDatabaseContract, VERSIONS } from './postgres-database.contract.ts';
import { captureLogger, dropSchemas, postgresConfig, testSchemaName } from './postgres-harness.ts';

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

  postgresDatabaseContract('postgres', () => db);

  describe('migrations', () => {
    it('two replicas migrating a fresh schema at once both succeed, and it is applied once', async () => {
      const schema = testSchemaName();
      const replicas = [database(schema), database(schema), database(schema)];
      const results = await Promise.all(replicas.map((r) => r.migrate()));
      expect(results.flat().sort()).toEqual(VERSIONS);
      expect((await replicas[0]!.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual(
        VERSIONS.map((version) => ({ version })),
      );
      await Promise.all(replicas.map((r) => r.init()));
    });
  });

  describe('connections', () => {
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
