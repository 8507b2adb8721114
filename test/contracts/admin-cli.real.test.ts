import { afterAll, describe, expect, it } from 'vitest';
import { PostgresCredentialStore } from '../../src/adapters/postgres/credential-store.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import type { Env } from '../../src/config/env.ts';
import { verifyPassword } from '../../src/service/password-hasher.ts';
import { captureLogger, dropSchemas, postgresConfig, testSchemaName } from './postgres-harness.ts';
import { cli, runBin } from './admin-cli-harness.ts';
import { VERSIONS } from './postgres-database.contract.ts';

const DSN = process.env.POSTGRES_DSN;

describe.skipIf(!DSN)('orders-admin against the real server', () => {
  const schema = testSchemaName();
  const env: Env = { POSTGRES_DSN: DSN, POSTGRES_SCHEMA: schema };
  const db = new PostgresDatabase(postgresConfig(DSN as string, { schema }), captureLogger().logger);
  const store = new PostgresCredentialStore(db);

  afterAll(async () => {
    await db.stop();
    await dropSchemas(DSN as string, [schema]);
  });

  it('migrate applies every migration once, then reports nothing pending', async () => {
    const stdout = VERSIONS.map((v) => `applied migration ${v}\n`).join('');
    expect(await cli(['migrate'], env)).toEqual({ code: 0, stdout, stderr: '' });
    expect(await cli(['migrate'], env)).toEqual({ code: 0, stdout: 'no pending migrations\n', stderr: '' });
  });

  it('users add stores a verifiable hash of the stdin password, trimming one trailing newline only', async () => {
    const password = ' correct horse\tbattery \n';
    const result = await cli(['users', 'add', 'alice'], env, `${password}\n`);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^user alice added with id [0-9a-f-]{36}\n$/);
    expect(result.stdout + result.stderr).not.toContain('correct horse');
    const user = await store.findByUsername('alice');
    expect(user?.passwordHash).toMatch(/^scrypt\$/);
    expect(await verifyPassword(password, user!.passwordHash)).toBe(true);
    expect(await verifyPassword(password.trimEnd(), user!.passwordHash)).toBe(false);
    expect(result.stdout).toContain(user!.id);
  });

  it('users add of an existing user says so, names set-password, exits 0, and keeps the user and its password', async () => {
    const before = await store.findByUsername('alice');
    const result = await cli(['users', 'add', 'alice'], env, 'other-password');
    expect(result).toEqual({
      code: 0,
      stdout: 'user alice already exists; left unchanged (to replace its password: orders-admin users set-password alice)\n',
      stderr: '',
    });
    expect(await store.findByUsername('alice')).toEqual(before);
    expect(await verifyPassword('other-password', before!.passwordHash)).toBe(false);
  });

  it('users set-password replaces the hash of an existing user (same id); an unknown user is exit 1', async () => {
    const before = await store.findByUsername('alice');
    const result = await cli(['users', 'set-password', 'alice'], env, 'new-password\n');
    expect(result).toEqual({ code: 0, stdout: 'password of user alice replaced\n', stderr: '' });
    const after = await store.findByUsername('alice');
    expect(after?.id).toBe(before?.id);
    expect(await verifyPassword('new-password', after!.passwordHash)).toBe(true);
    expect(result.stdout + result.stderr).not.toContain('new-password');
    expect(await cli(['users', 'set-password', 'nobody'], env, 'pw')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: no user nobody (add it: orders-admin users add nobody)\n',
    });
    expect(await store.findByUsername('nobody')).toBeUndefined();
  });

  it('works end to end through the bin with the password piped in, trimming a CRLF line ending', async () => {
    const result = await runBin(['users', 'add', 'bob'], { POSTGRES_DSN: DSN as string, POSTGRES_SCHEMA: schema }, 'piped-pw\r\n');
    expect(result).toEqual({ code: 0, stdout: expect.stringMatching(/^user bob added with id /), stderr: '' });
    expect(await verifyPassword('piped-pw', (await store.findByUsername('bob'))!.passwordHash)).toBe(true);
  });
});
