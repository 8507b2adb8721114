// Everything of the hermetic suite that needs PostgreSQL, on the test worker's PGlite (test/support/pglite.ts),
// in one file: a worker boots PGlite for the first file that leases it, ~2 s of CPU with the WebAssembly
// compilation, so these checks share a file and one worker boots it, not each worker that drew one of them.
// - The Postgres adapters' contract (test/contracts/postgres-database.contract.ts), which
//   test/contracts/postgres.real.test.ts runs on the real server.
// - PostgresCredentialStore's own checks.
// - orders-admin's database commands, through pglite-socket (POSTGRES_DSN points at it); its arguments, usage
//   and failures without a database are src/cli/admin-cli.test.ts.
// The groups run one after the other, each on a lease of its own: PGlite has one session, whose search_path
// each group sets.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { cli } from '../../../test/contracts/admin-cli-harness.ts';
import { postgresDatabaseContract, VERSIONS } from '../../../test/contracts/postgres-database.contract.ts';
import { captureLogger, startPgliteDatabase, type PgliteDatabase } from '../../../test/contracts/postgres-harness.ts';
import { until } from '../../../test/support/eventually.ts';
import { leasePglite, type PgliteLease } from '../../../test/support/pglite.ts';
import type { Env } from '../../config/env.ts';
import { ErrConflict, ErrUnavailable } from '../../domain/errors.ts';
import type { User } from '../../domain/user.ts';
import { verifyPassword } from '../../service/password-hasher.ts';
import { PostgresCredentialStore } from './credential-store.ts';
import type { PostgresDatabase, Queryable } from './database.ts';
import { loadMigrations } from './migrations.ts';

describe('the Postgres adapters on PGlite', () => {
  const POOL_SIZE = 4;
  let pglite: PgliteDatabase | undefined;
  let db: PostgresDatabase;

  beforeAll(async () => {
    pglite = await startPgliteDatabase('orders_pglite', POOL_SIZE, captureLogger().logger);
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

  describe('PostgresCredentialStore', () => {
    function user(): User {
      return { id: randomUUID(), username: `user-${randomUUID()}`, passwordHash: `scrypt$16384$8$1$salt$${randomUUID()}` };
    }

    /** A database that fails every statement as PostgreSQL would when it shuts down. */
    const failing: Queryable = {
      query: () => Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
    };

    it('[SVC-credential-store] setPasswordHash stores the new hash for that user only and says so; an unknown user is false', async () => {
      const store = new PostgresCredentialStore(db);
      const a = user();
      const b = user();
      await store.add(a);
      await store.add(b);
      expect(await store.setPasswordHash(a.username, 'scrypt$16384$8$1$salt$new')).toBe(true);
      expect(await store.findByUsername(a.username)).toEqual({ ...a, passwordHash: 'scrypt$16384$8$1$salt$new' });
      expect(await store.findByUsername(b.username)).toEqual(b);
      const nobody = `nobody-${randomUUID()}`;
      expect(await store.setPasswordHash(nobody, 'scrypt$16384$8$1$salt$x')).toBe(false);
      expect(await store.findByUsername(nobody)).toBeUndefined();
      const { rows } = await db.query('SELECT username, password_hash FROM users WHERE id = $1', [a.id]);
      expect(rows).toEqual([{ username: a.username, password_hash: 'scrypt$16384$8$1$salt$new' }]);
    });

    it('[SVC-credential-store] a taken username is an ErrConflict naming the constraint', async () => {
      const store = new PostgresCredentialStore(db);
      const first = user();
      await store.add(first);
      const error = await store.add({ ...user(), username: first.username }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrConflict);
      expect((error as Error).message).toBe('database: add user: duplicate key (constraint users_username_key)');
    });

    it('[ERR-internal] a database failure is an ErrUnavailable naming the operation, for every operation', async () => {
      const store = new PostgresCredentialStore(failing);
      const reason = 'terminating connection due to administrator command (SQLSTATE 57P01)';
      const find = await store.findByUsername('alice').catch((e: unknown) => e);
      expect(find).toBeInstanceOf(ErrUnavailable);
      expect((find as Error).message).toBe(`database: find user: ${reason}`);
      const set = await store.setPasswordHash('alice', 'h').catch((e: unknown) => e);
      expect(set).toBeInstanceOf(ErrUnavailable);
      expect((set as Error).message).toBe(`database: set password: ${reason}`);
      const add = await store.add(user()).catch((e: unknown) => e);
      expect(add).toBeInstanceOf(ErrUnavailable);
      expect((add as Error).message).toBe(`database: add user: ${reason}`);
    });

    it('[ERR-invalid-credentials] a username with a NUL character is no user (PostgreSQL text cannot hold one)', async () => {
      const store = new PostgresCredentialStore(db);
      await expect(store.findByUsername('a\u0000b')).resolves.toBeUndefined();
    });
  });
});

describe('orders-admin on PGlite', () => {
  let pglite: PgliteLease | undefined;
  let env: Env;
  const query = async (sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> =>
    (await (pglite as PgliteLease).db.query<Record<string, unknown>>(sql, params)).rows;
  const userRow = async (username: string): Promise<Record<string, unknown> | undefined> =>
    (await query('SELECT id, username, password_hash FROM cli_test.users WHERE username = $1', [username]))[0];

  /**
   * Every pool a run made is ended when it returns (a pool left open would hold the process,
   * bin/orders-admin.ts, for pg's idle timeout, 10 s): seen on the pools themselves, then, as the server
   * learns of the closes in its own time, on the server.
   */
  const pools: pg.Pool[] = [];
  const connectionsClosed = async (): Promise<void> => {
    for (const pool of pools.splice(0)) expect([pool.ended, pool.totalCount]).toEqual([true, 0]);
    await until(
      () => (pglite as PgliteLease).server.getStats().activeConnections === 0,
      'the server to see the CLI run’s connections closed',
    );
  };

  beforeAll(async () => {
    pglite = await leasePglite(8);
    env = { POSTGRES_DSN: pglite.dsn, POSTGRES_SCHEMA: 'cli_test' };
  });

  beforeEach(() => {
    // Every pool that connects, so connectionsClosed can see it ended.
    const connect = pg.Pool.prototype.connect as (this: pg.Pool, ...args: unknown[]) => unknown;
    vi.spyOn(pg.Pool.prototype, 'connect').mockImplementation(function (this: pg.Pool, ...args: unknown[]) {
      if (!pools.includes(this)) pools.push(this);
      return connect.apply(this, args);
    } as pg.Pool['connect']);
  });

  afterEach(() => {
    vi.restoreAllMocks();
    pools.length = 0;
  });

  afterAll(async () => {
    await pglite?.release();
  });

  it('[LIFE-2-init-connect] migrate applies every migration once, then reports nothing pending', async () => {
    const versions = (await loadMigrations()).map((m) => m.version);
    expect(versions.length).toBeGreaterThan(1);
    const stdout = versions.map((v) => `applied migration ${v}\n`).join('');
    expect(await cli(['migrate'], env)).toEqual({ code: 0, stdout, stderr: '' });
    await connectionsClosed();
    expect(await cli(['migrate'], env)).toEqual({ code: 0, stdout: 'no pending migrations\n', stderr: '' });
    await connectionsClosed();
  });

  it("[LOG-json] a connection lost while idle is logged to stderr as a JSON error line without the password; stdout and the exit code stay the command's", async () => {
    await cli(['migrate'], env);
    await connectionsClosed();
    // pg's pool reports an idle connection the server dropped as an 'error' event on the pool: here one
    // comes just as the run stops its pools (the connection migrate used is idle in the pool then).
    const end = pg.Pool.prototype.end as (this: pg.Pool) => Promise<void>;
    vi.spyOn(pg.Pool.prototype, 'end').mockImplementationOnce(function (this: pg.Pool) {
      // pg-pool passes the client too; the listener reads only the error.
      this.emit('error', new Error('terminating connection: postgres:pglite-pw went away'), {} as pg.PoolClient);
      return end.call(this);
    } as pg.Pool['end']);
    const result = await cli(['migrate'], env);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: 'no pending migrations\n' });
    expect(result.stderr.endsWith('\n')).toBe(true);
    expect(
      result.stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      {
        time: expect.any(String),
        level: 'error',
        msg: 'database: idle connection lost',
        error: 'terminating connection: postgres:*** went away',
      },
    ]);
    await connectionsClosed();
  });

  it('[ERR-internal] a migration refused as a duplicate is exit 1, reported by type: only users add reads a conflict as an existing user', async () => {
    // A schema whose schema_migrations refuses every row as a unique violation (SQLSTATE 23505, an ErrConflict).
    await (pglite as PgliteLease).db.exec(`
      CREATE SCHEMA cli_conflict;
      CREATE TABLE cli_conflict.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
      CREATE FUNCTION cli_conflict.refuse() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'duplicate version' USING ERRCODE = 'unique_violation'; END
      $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse BEFORE INSERT ON cli_conflict.schema_migrations FOR EACH ROW EXECUTE FUNCTION cli_conflict.refuse();
    `);
    expect(await cli(['migrate'], { ...env, POSTGRES_SCHEMA: 'cli_conflict' })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected ErrConflict\n',
    });
    await connectionsClosed();
    // users add migrates at init: that conflict is no existing user either.
    expect(await cli(['users', 'add', `carol-${randomUUID()}`], { ...env, POSTGRES_SCHEMA: 'cli_conflict' }, 'pw\n')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected ErrConflict\n',
    });
    await connectionsClosed();
  });

  it('[SVC-credential-store] users add whose insert fails otherwise than as a duplicate is exit 1 with the error, never "already exists"', async () => {
    const schema = 'cli_refuse';
    expect((await cli(['migrate'], { ...env, POSTGRES_SCHEMA: schema })).code).toBe(0);
    await connectionsClosed();
    // Every insert into users is refused by a CHECK-class error (23514): an ErrUnavailable, no ErrConflict.
    await (pglite as PgliteLease).db.exec(`
      CREATE FUNCTION ${schema}.refuse() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'no new users' USING ERRCODE = 'check_violation'; END
      $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse BEFORE INSERT ON ${schema}.users FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse();
    `);
    const username = `dave-${randomUUID()}`;
    const result = await cli(['users', 'add', username], { ...env, POSTGRES_SCHEMA: schema }, 'pw\n');
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^orders-admin: database: add user: integrity: row rejected by the database: .*no new users.*\n$/);
    await connectionsClosed();
  });

  it('[SVC-credential-store] users add stores a verifiable hash of the stdin password, one trailing newline dropped, no secret printed', async () => {
    const username = `alice-${randomUUID()}`;
    const password = ' correct horse\tbattery \n';
    // Chunks as a pipe may deliver them, text and bytes.
    const result = await cli(['users', 'add', username], env, Readable.from([' correct ', Buffer.from('horse\tbattery \n'), '\r\n']));
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const row = await userRow(username);
    expect(result.stdout).toBe(`user ${username} added with id ${String(row?.['id'])}\n`);
    expect(String(row?.['id'])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(result.stdout).not.toContain('horse');
    const hash = String(row?.['password_hash']);
    expect(hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword(password, hash)).toBe(true);
    expect(await verifyPassword(password.trimEnd(), hash)).toBe(false);
  });

  it('[SVC-credential-store] users add of an existing user says so, names set-password, exits 0, and keeps its password', async () => {
    const username = `bob-${randomUUID()}`;
    expect((await cli(['users', 'add', username], env, 'first\n')).code).toBe(0);
    const before = await userRow(username);
    expect(await cli(['users', 'add', username], env, 'second\n')).toEqual({
      code: 0,
      stdout: `user ${username} already exists; left unchanged (to replace its password: orders-admin users set-password ${username})\n`,
      stderr: '',
    });
    expect(await userRow(username)).toEqual(before);
  });

  it('[SVC-credential-store] users set-password replaces the hash of an existing user (same id); an unknown user is exit 1', async () => {
    const username = `carol-${randomUUID()}`;
    await cli(['users', 'add', username], env, 'old-password');
    const before = await userRow(username);
    expect(await cli(['users', 'set-password', username], env, 'new-password\n')).toEqual({
      code: 0,
      stdout: `password of user ${username} replaced\n`,
      stderr: '',
    });
    await connectionsClosed();
    const after = await userRow(username);
    expect(after?.['id']).toBe(before?.['id']);
    expect(await verifyPassword('new-password', String(after?.['password_hash']))).toBe(true);

    const nobody = `nobody-${randomUUID()}`;
    expect(await cli(['users', 'set-password', nobody], env, 'pw')).toEqual({
      code: 1,
      stdout: '',
      stderr: `orders-admin: no user ${nobody} (add it: orders-admin users add ${nobody})\n`,
    });
    expect(await userRow(nobody)).toBeUndefined();
  });
});
