// orders-admin in this process: its argument parsing, usage and exit codes (0 done, 1 failed, 2 bad
// arguments), the password read from stdin, and the user and migration commands on PGlite through
// pglite-socket (POSTGRES_DSN points at it). test/contracts/admin-cli*.test.ts run the same CLI on the real
// server and through the bin.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../config/env.ts';
import { verifyPassword } from '../service/password-hasher.ts';
import { loadMigrations } from '../adapters/postgres/migrations.ts';
import { until } from '../../test/support/eventually.ts';
import { leasePglite, type PgliteLease } from '../../test/support/pglite.ts';
import { runAdminCli, usage, USAGE, type AdminCommand } from './admin-cli.ts';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(
  argv: string[],
  env: Env,
  stdin: AsyncIterable<string | Uint8Array> | string = '',
  extra: readonly AdminCommand[] = [],
): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const io = {
    env,
    stdin: typeof stdin === 'string' ? Readable.from(stdin === '' ? [] : [Buffer.from(stdin)]) : stdin,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const code = await runAdminCli(argv, io, extra);
  return { code, stdout, stderr };
}

/** Nothing listens on port 1: a connection is refused at once. */
const CLOSED: Env = { POSTGRES_DSN: 'postgres://u:s3cret@127.0.0.1:1/x' };

describe('orders-admin arguments', () => {
  it('[CONFIG-formats] the usage names every command, the environment and the exit codes', () => {
    expect(USAGE.startsWith('usage:\n  orders-admin migrate ')).toBe(true);
    for (const text of [
      'orders-admin users add <username>',
      'orders-admin users set-password <username>',
      'POSTGRES_DSN     required',
      'exit codes: 0 done, 1 failed, 2 bad arguments\n',
    ])
      expect(USAGE).toContain(text);
  });

  it.each([['-h'], ['--help'], ['help']])(
    '[CONFIG-formats] %s alone prints the usage on stdout, exit 0, touching nothing',
    async (flag) => {
      // No POSTGRES_DSN: help needs no configuration.
      expect(await cli([flag], {})).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    },
  );

  it.each([
    [[], 'missing command'],
    [['--help', 'migrate'], 'unknown arguments: --help migrate'],
    [['help', 'help'], 'unknown arguments: help help'],
    [['-h', 'x'], 'unknown arguments: -h x'],
    [['migrate', 'now'], 'unknown arguments: migrate now'],
    [['frobnicate'], 'unknown arguments: frobnicate'],
    [['users'], 'unknown arguments: users'],
    [['users', 'add'], 'unknown arguments: users add'],
    [['users', 'set-password'], 'unknown arguments: users set-password'],
    [['users', 'add', 'a', 'b'], 'unknown arguments: users add a b'],
    [['users', 'set-password', 'a', 'b'], 'unknown arguments: users set-password a b'],
    [['users', 'remove', 'a'], 'unknown arguments: users remove a'],
    [['people', 'add', 'a'], 'unknown arguments: people add a'],
    [['users', 'add', ''], 'username must be non-empty, without surrounding whitespace'],
    [['users', 'add', ' padded'], 'username must be non-empty, without surrounding whitespace'],
    [['users', 'set-password', 'padded '], 'username must be non-empty, without surrounding whitespace'],
  ])('[CONFIG-formats] %j: exit 2, `%s` and the usage on stderr, nothing on stdout', async (argv, problem) => {
    // A closed DSN: were the arguments taken, the command would fail with exit 1 instead.
    expect(await cli(argv, CLOSED, 'pw\n')).toEqual({ code: 2, stdout: '', stderr: `orders-admin: ${problem}\n${USAGE}` });
  });

  it('[CONFIG-formats] an added command gets the words after its name, and its lines in the usage', async () => {
    const seen: (readonly string[])[] = [];
    const echo: AdminCommand = {
      name: 'echo',
      usage: '  orders-admin echo <words>             the words back\n',
      environment: '  ECHO_TO          echo: where\n',
      run: async (args) => (seen.push(args), 7),
    };
    expect(await cli(['echo', 'a', 'b'], {}, '', [echo])).toEqual({ code: 7, stdout: '', stderr: '' });
    expect(seen).toEqual([['a', 'b']]);
    const full = usage([echo]);
    expect(full).toBe(
      USAGE.replace('environment:\n', `${echo.usage}environment:\n`).replace('exit codes:', `${echo.environment}exit codes:`),
    );
    expect(await cli(['--help'], {}, '', [echo])).toEqual({ code: 0, stdout: full, stderr: '' });
    // Its name only as the first word.
    expect((await cli(['users', 'echo'], {}, '', [echo])).stderr).toBe(`orders-admin: unknown arguments: users echo\n${full}`);
    expect(seen).toHaveLength(1);
  });
});

describe('orders-admin without a database', () => {
  it.each([[['migrate']], [['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[CONFIG-required] %j without POSTGRES_DSN: exit 1 naming the variable',
    async (argv) => {
      expect(await cli(argv, {}, 'pw\n')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'orders-admin: config: missing required variable POSTGRES_DSN\n',
      });
    },
  );

  it('[CONFIG-no-secret-echo] a bad POSTGRES_SCHEMA: exit 1 naming it', async () => {
    expect(await cli(['migrate'], { ...CLOSED, POSTGRES_SCHEMA: 'Bad-Name' })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: config: POSTGRES_SCHEMA must be a lowercase identifier (a-z, 0-9, _; at most 63 characters)\n',
    });
  });

  it.each([[['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[AUTH-10-credentials] %j refuses an empty password (a lone newline counts as empty) before touching the database',
    async (argv) => {
      for (const stdin of ['', '\n', '\r\n']) {
        expect(await cli(argv, CLOSED, stdin)).toEqual({
          code: 1,
          stdout: '',
          stderr: 'orders-admin: password must not be empty (read from stdin)\n',
        });
      }
    },
  );

  it.each([[['migrate']], [['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[CONFIG-no-secret-echo] %j on an unreachable database: exit 1, a message naming host and database, never the password',
    async (argv) => {
      const result = await cli(argv, CLOSED, 'pw-123\n');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^orders-admin: database: cannot connect to POSTGRES_DSN \(127\.0\.0\.1:1\/x\)/);
      expect(result.stderr).not.toContain('s3cret');
      expect(result.stderr).not.toContain('pw-123');
    },
  );

  it('[ERR-internal] an unexpected failure is reported by its type only, exit 1', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield 'partial-secret';
      throw new TypeError('stdin broke while holding partial-secret');
    }
    expect(await cli(['users', 'add', 'alice'], CLOSED, failing())).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected TypeError\n',
    });
    async function* throwsString(): AsyncGenerator<string> {
      yield* [];
      throw 'not an Error';
    }
    expect(await cli(['users', 'add', 'alice'], CLOSED, throwsString())).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected error\n',
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
