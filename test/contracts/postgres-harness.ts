import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { POSTGRES_DEFAULTS, type PostgresConfig } from '../../src/adapters/postgres/config.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { leasePglite } from '../support/pglite.ts';

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
 * The unmodified pg Pool talking to the test worker's PGlite through pglite-socket, migrated into
 * `schema` (test/support/pglite.ts: one PGlite per worker, each file on a clean database). Statements go
 * unnamed: every socket connection shares PGlite's single session.
 */
export async function startPgliteDatabase(schema: string, poolSize: number, logger: Logger): Promise<PgliteDatabase> {
  const pglite = await leasePglite(poolSize + 4);
  const db = new PostgresDatabase(postgresConfig(pglite.dsn, { schema, poolSize, preparedStatements: false }), logger);
  await db.init();
  return {
    db,
    stop: async () => {
      await db.stop();
      await pglite.release();
    },
  };
}
