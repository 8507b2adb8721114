import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { QueryConfig, QueryResult } from 'pg';
import type * as FsPromises from 'node:fs/promises';
import { loadMigrations, migrate, MigrationError, type MigrationClient } from './migrations.ts';

// A platform whose readdir does not list by name (libuv sorts on Linux; nothing promises it everywhere):
// here every listing comes reversed, so loadMigrations' own sort is what puts 001 before 002.
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  return { ...fs, readdir: async (dir: URL) => (await fs.readdir(dir)).reverse() };
});

/**
 * A connection that records every statement and answers "no rows" (so every migration is pending),
 * except the statement `fail` picks, which rejects with `error`.
 */
function recordingClient(fail: (text: string) => boolean = () => false, error: unknown = undefined) {
  const statements: string[] = [];
  const client: MigrationClient = {
    query: async <R>(query: QueryConfig) => {
      statements.push(query.text);
      if (fail(query.text)) throw error;
      return { rows: [], rowCount: 0 } as unknown as QueryResult<R & object>;
    },
  };
  return { client, statements };
}

const MIGRATIONS = [
  { version: '001_a', sql: 'CREATE TABLE a ()' },
  { version: '002_b', sql: 'CREATE TABLE b ()' },
];

// The migrations the database applies in its Init (rule LIFE-2-init-connect), in file-name order.
describe('loadMigrations', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('reads only NNN_name.sql files, in name order, versioned by the name without .sql', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    dirs.push(dir);
    const files: Record<string, string> = {
      '002_second.sql': 'SELECT 2',
      '001_first.sql': 'SELECT 1',
      // Anything else in the folder is no migration: notes, editor copies, names not starting with digits.
      'README.md': 'notes',
      '003_third.sql.bak': 'old',
      'x003_third.sql': 'prefixed',
      '003_Third.sql': 'capital',
    };
    for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
    const loaded = await loadMigrations(pathToFileURL(`${dir}/`));
    expect(loaded).toEqual([
      { version: '001_first', sql: 'SELECT 1' },
      { version: '002_second', sql: 'SELECT 2' },
    ]);
  });
});

describe('migrate', () => {
  it('under the advisory lock, each pending migration in its own transaction with its record', async () => {
    const { client, statements } = recordingClient();
    expect(await migrate(client, { migrations: MIGRATIONS })).toEqual(['001_a', '002_b']);
    // Without a schema option no schema is created.
    expect(statements.some((text) => text.includes('CREATE SCHEMA'))).toBe(false);
    expect(statements[0]).toBe('SELECT pg_advisory_lock($1)');
    expect(statements.slice(2)).toEqual([
      'BEGIN',
      'SELECT 1 FROM schema_migrations WHERE version = $1',
      'CREATE TABLE a ()',
      'INSERT INTO schema_migrations (version) VALUES ($1)',
      'COMMIT',
      'BEGIN',
      'SELECT 1 FROM schema_migrations WHERE version = $1',
      'CREATE TABLE b ()',
      'INSERT INTO schema_migrations (version) VALUES ($1)',
      'COMMIT',
      'SELECT pg_advisory_unlock($1)',
    ]);
  });

  it('a schema is created (quoted) before anything else under the lock', async () => {
    const { client, statements } = recordingClient();
    await migrate(client, { schema: 't_abc', migrations: [] });
    expect(statements[1]).toBe('CREATE SCHEMA IF NOT EXISTS "t_abc"');
  });

  it('a failing migration is rolled back, the lock released, and the error names it and keeps the SQLSTATE', async () => {
    const cause = Object.assign(new Error('relation "b" already exists'), { code: '42P07' });
    const { client, statements } = recordingClient((text) => text === 'CREATE TABLE b ()', cause);
    const error = await migrate(client, { migrations: MIGRATIONS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect(error).toMatchObject({
      name: 'MigrationError',
      message: 'migration 002_b failed: relation "b" already exists',
      version: '002_b',
      code: '42P07',
    });
    expect(statements.slice(-3)).toEqual(['CREATE TABLE b ()', 'ROLLBACK', 'SELECT pg_advisory_unlock($1)']);
  });

  it('a failure that is no driver error still names the migration, without a code', async () => {
    for (const [cause, detail] of [
      [null, 'null'],
      ['gone', 'gone'],
      [Object.assign(new Error('numeric code'), { code: 7 }), 'numeric code'],
    ] as const) {
      const { client } = recordingClient((text) => text === 'CREATE TABLE a ()', cause);
      const error = await migrate(client, { migrations: MIGRATIONS }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(error).toMatchObject({ message: `migration 001_a failed: ${detail}`, version: '001_a', code: undefined });
    }
  });
});
