import { afterAll, describe, expect, it } from 'vitest';
import { PostgresCredentialStore } from '../../src/adapters/postgres/postgres-credential-store.ts';
import { PostgresDatabase } from '../../src/adapters/postgres/postgres-database.ts';
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

  it('a duplicate username is exit 1 with a clear message, and the first user is kept', async () => {
    const before = await store.findByUsername('alice');
    const result = await cli(['users', 'add', 'alice'], env, 'other-password');
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'orders-admin: user alice already exists\n' });
    expect(await store.findByUsername('alice')).toEqual(before);
  });

  it('works end to end through the bin with the password piped in, trimming a CRLF line ending', async () => {
    const result = await runBin(['users', 'add', 'bob'], { POSTGRES_DSN: DSN as string, POSTGRES_SCHEMA: schema }, 'piped-pw\r\n');
    expect(result).toEqual({ code: 0, stdout: expect.stringMatching(/^user bob added with id /), stderr: '' });
    expect(await verifyPassword('piped-pw', (await store.findByUsername('bob'))!.passwordHash)).toBe(true);
  });
});
