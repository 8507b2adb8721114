import { describe, expect, it } from 'vitest';
import { scrub, translatePgError } from '../../src/adapters/postgres/pg-errors.ts';
import { describeDsn, dsnSecrets, postgresConfigFromEnv } from '../../src/adapters/postgres/postgres-config.ts';
import { ErrConflict, ErrUnavailable } from '../../src/domain/errors.ts';

function pgError(code: string, message: string, constraint?: string): Error {
  return Object.assign(new Error(message), { code, constraint });
}

describe('translatePgError', () => {
  it('23505 unique violation → ErrConflict naming the constraint', () => {
    const error = translatePgError(
      pgError('23505', 'duplicate key value violates unique constraint "users_username_key"', 'users_username_key'),
      'add user',
    );
    expect(error).toBeInstanceOf(ErrConflict);
    expect(error.message).toBe('database: add user: duplicate key (constraint users_username_key)');
  });

  it('23514 check violation → internal ErrUnavailable (integrity), not a caller error', () => {
    const error = translatePgError(
      pgError('23514', 'new row for relation "orders" violates check constraint "orders_quantity_check"', 'orders_quantity_check'),
      'insert order',
    );
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect(error.message).toMatch(/^database: insert order: integrity: .*orders_quantity_check.*SQLSTATE 23514\)$/);
  });

  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['08006', 'connection failure'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'],
    ['ETIMEDOUT', 'connect ETIMEDOUT'],
  ])('%s → ErrUnavailable', (code, message) => {
    const error = translatePgError(pgError(code, message), 'find order');
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect(error.message).toContain(message);
  });

  it('plain driver errors (timeouts, ended pool, non-errors) → ErrUnavailable', () => {
    expect(translatePgError(new Error('Query read timeout'), 'list orders').message).toBe('database: list orders: Query read timeout');
    expect(translatePgError(new Error('Cannot use a pool after calling end on the pool'), 'health')).toBeInstanceOf(ErrUnavailable);
    expect(translatePgError('boom', 'health').message).toBe('database: health: boom');
  });

  it('never carries a cause or a password', () => {
    const driver = pgError('08001', 'could not connect with postgres://u:hunter2@db:5432/x');
    const error = translatePgError(driver, 'connect', ['hunter2']);
    expect(error.cause).toBeUndefined();
    expect(error.message).not.toContain('hunter2');
  });

  it('passes already-translated errors through', () => {
    const conflict = new ErrConflict('x');
    expect(translatePgError(conflict, 'op')).toBe(conflict);
  });
});

describe('scrub', () => {
  it('removes listed secrets and any URL credential', () => {
    expect(scrub('pw=abc123 and again abc123', ['abc123'])).toBe('pw=*** and again ***');
    expect(scrub('dial postgres://user:pa:ss@host/db failed')).toBe('dial postgres://user:***@host/db failed');
  });
});

// Missing POSTGRES_DSN, named and never echoed: src/config/config-rules.test.ts.
describe('postgres config', () => {
  it('has a connect timeout, a pool size of 10 and no schema by default', () => {
    const config = postgresConfigFromEnv({ POSTGRES_DSN: 'postgres://u:p@h/db' });
    expect(config).toMatchObject({
      dsn: 'postgres://u:p@h/db',
      schema: undefined,
      poolSize: 10,
      connectTimeoutMs: 5_000,
      healthTimeoutMs: 2_000,
    });
  });

  it('accepts a plain POSTGRES_SCHEMA and refuses one that would need quoting', () => {
    expect(postgresConfigFromEnv({ POSTGRES_DSN: 'postgres://h/db', POSTGRES_SCHEMA: 't_ab12' }).schema).toBe('t_ab12');
    for (const bad of ['Public', 'a"b', 'x; drop', '1abc']) {
      expect(() => postgresConfigFromEnv({ POSTGRES_DSN: 'postgres://h/db', POSTGRES_SCHEMA: bad })).toThrow(/POSTGRES_SCHEMA/);
    }
  });

  it('describes a DSN as host:port/database only', () => {
    expect(describeDsn('postgres://u:s3cret@db.internal:6543/orders?sslmode=require')).toBe('db.internal:6543/orders');
    expect(describeDsn('postgresql://db/orders')).toBe('db:5432/orders');
    expect(describeDsn('host=db password=s3cret')).toBe('(unparseable DSN)');
    expect(dsnSecrets('postgres://u:p%40ss@h/db')).toEqual(expect.arrayContaining(['p%40ss', 'p@ss']));
    expect(dsnSecrets('postgres://u@h/db')).toEqual([]);
  });
});
