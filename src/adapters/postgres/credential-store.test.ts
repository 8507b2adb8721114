import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrConflict, ErrUnavailable } from '../../domain/errors.ts';
import type { User } from '../../domain/user.ts';
import { captureLogger, startPgliteDatabase, type PgliteDatabase } from '../../../test/contracts/postgres-harness.ts';
import { PostgresCredentialStore } from './credential-store.ts';
import type { PostgresDatabase, Queryable } from './database.ts';

/** The store over the unmodified pg Pool and PGlite (startPgliteDatabase). */
let pglite: PgliteDatabase | undefined;
let db: PostgresDatabase;

beforeAll(async () => {
  pglite = await startPgliteDatabase('credentials_pglite', 2, captureLogger().logger);
  db = pglite.db;
});

afterAll(async () => {
  await pglite?.stop();
});

function user(): User {
  return { id: randomUUID(), username: `user-${randomUUID()}`, passwordHash: `scrypt$16384$8$1$salt$${randomUUID()}` };
}

/** A database that fails every statement as PostgreSQL would when it shuts down. */
const failing: Queryable = {
  query: () => Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
};

describe('PostgresCredentialStore', () => {
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
