/**
 * The schema's migrations: SQL files beside this module, applied in file-name order, once each, by whichever
 * replica holds the advisory lock (spec 3.4 rule 2: init migrates).
 */
import { readdir, readFile } from 'node:fs/promises';
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** A connection held for the whole run: the advisory lock is per session. */
export interface MigrationClient {
  query<R extends QueryResultRow = QueryResultRow>(query: QueryConfig): Promise<QueryResult<R>>;
}

export interface Migration {
  /** File name without `.sql`, e.g. `001_init`; recorded in schema_migrations. */
  readonly version: string;
  readonly sql: string;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Shared by every replica: whoever holds it migrates, the others wait. Session-level: one connection. */
const MIGRATION_LOCK_KEY = '4205921784413075001';

/** Migrations may legitimately run longer than a request query (index builds). */
const MIGRATION_QUERY_TIMEOUT_MS = 10 * 60_000;

export async function loadMigrations(dir: URL = MIGRATIONS_DIR): Promise<Migration[]> {
  // Sorted here: nothing promises readdir's order on every platform.
  const names = (await readdir(dir)).filter((name) => /^\d+_[a-z0-9_]+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => ({ version: name.slice(0, -'.sql'.length), sql: await readFile(new URL(name, dir), 'utf8') })),
  );
}

export interface MigrateOptions {
  /** Created if missing. The caller's connections must already have it on their search_path. */
  readonly schema?: string | undefined;
  readonly migrations?: readonly Migration[];
}

/**
 * Each migration in its own transaction with its schema_migrations row: a re-run is a no-op and a failure
 * leaves nothing half-applied. Returns the versions applied. On PGlite (one shared session, where the lock
 * is re-entrant) the socket server's one-transaction-at-a-time rule serialises them instead.
 */
export async function migrate(client: MigrationClient, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = options.migrations ?? (await loadMigrations());
  const run = (text: string, values?: unknown[]) => {
    // pg reads a per-query query_timeout at runtime; @types/pg does not declare it.
    const query: QueryConfig & { query_timeout: number } = { text, values, query_timeout: MIGRATION_QUERY_TIMEOUT_MS };
    return client.query(query);
  };
  await run('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    // Under the lock: concurrent CREATE ... IF NOT EXISTS can still collide on the catalog.
    if (options.schema !== undefined) await run(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
    await run(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version    text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const applied: string[] = [];
    for (const migration of migrations) {
      await run('BEGIN');
      try {
        const done = await run('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
        if (done.rowCount === 0) {
          await run(migration.sql);
          await run('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
          applied.push(migration.version);
        }
        await run('COMMIT');
      } catch (error) {
        await run('ROLLBACK').catch(() => undefined);
        throw new MigrationError(migration.version, error);
      }
    }
    return applied;
  } finally {
    // If the connection broke, the session (and its lock) is already gone with it.
    await run('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}

/** Names the failing migration and keeps the driver's SQLSTATE so errors.ts can classify it. */
export class MigrationError extends Error {
  readonly version: string;
  readonly code: string | undefined;
  constructor(version: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`migration ${version} failed: ${detail}`);
    this.name = 'MigrationError';
    this.version = version;
    const code = (cause as { code?: unknown } | null)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}
