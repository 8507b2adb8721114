import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { POSTGRES_DEFAULTS, type PostgresConfig } from '../../src/adapters/postgres/config.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';

/** A logger whose JSON lines a test can read back. */
export function captureLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const raw: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void raw.push(line) });
  return { logger, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

export function testSchemaName(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

export function postgresConfig(dsn: string, overrides: Partial<PostgresConfig> = {}): PostgresConfig {
  return { ...POSTGRES_DEFAULTS, dsn, schema: undefined, ...overrides };
}

/** Drops test schemas over a connection of its own (the component's pool may be ended already). */
export async function dropSchemas(dsn: string, schemas: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A migrated PostgresDatabase on PGlite, and how to stop all of it. */
export interface PgliteDatabase {
  readonly db: PostgresDatabase;
  stop(): Promise<void>;
}

/**
 * The unmodified pg Pool talking to an in-process PGlite through pglite-socket, migrated into `schema`.
 * One per test file: each costs ~2-4 s and ~400 MB. Every socket connection shares PGlite's single
 * session, so the advisory lock is re-entrant there (see migrations.ts), SET search_path is session-wide
 * (one schema per PGlite), and statements are sent unnamed (one prepared on a connection would clash on
 * the next).
 */
export async function startPgliteDatabase(schema: string, poolSize: number, logger: Logger): Promise<PgliteDatabase> {
  const pglite = await PGlite.create();
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: poolSize + 4 });
  await server.start();
  const config = postgresConfig(`postgres://postgres:pglite-pw@${server.getServerConn()}/postgres`, {
    schema,
    poolSize,
    preparedStatements: false,
  });
  const db = new PostgresDatabase(config, logger);
  await db.init();
  return {
    db,
    stop: async () => {
      await db.stop();
      await server.stop();
      await pglite.close();
    },
  };
}
