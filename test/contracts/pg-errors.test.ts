import { describe, expect, it } from 'vitest';
import { scrub, translatePgError } from '../../src/adapters/postgres/errors.ts';
import { describeDsn, dsnSecrets, postgresConfigFromEnv } from '../../src/adapters/postgres/config.ts';
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

describe('translatePgError: the message a caller log sees', () => {
  it('[ERR-internal] 23505 without a constraint name names none; an ErrUnavailable passes through unchanged', () => {
    expect(translatePgError(pgError('23505', 'duplicate key'), 'add user').message).toBe('database: add user: duplicate key');
    const unavailable = new ErrUnavailable('database: x');
    expect(translatePgError(unavailable, 'op')).toBe(unavailable);
  });

  it('[ERR-internal] class 22 and 23 are integrity faults, with or without a constraint', () => {
    const bad = translatePgError(pgError('22P02', 'invalid input syntax for type uuid: "x"'), 'find order');
    expect(bad).toBeInstanceOf(ErrUnavailable);
    expect(bad.message).toBe(
      'database: find order: integrity: row rejected by the database: invalid input syntax for type uuid: "x" (SQLSTATE 22P02)',
    );
    const notNull = translatePgError(pgError('23502', 'null value in column "item"'), 'insert order');
    expect(notNull.message).toBe(
      'database: insert order: integrity: row rejected by the database: null value in column "item" (SQLSTATE 23502)',
    );
    const check = translatePgError(pgError('23514', 'check failed', 'orders_quantity_check'), 'insert order');
    expect(check.message).toBe(
      'database: insert order: integrity: row rejected by the database (constraint orders_quantity_check): check failed (SQLSTATE 23514)',
    );
  });

  it.each([
    ['57P01', 'terminating connection', 'database: op: terminating connection (SQLSTATE 57P01)'],
    ['08006', 'connection failure', 'database: op: connection failure (SQLSTATE 08006)'],
    ['0Z002', 'stacked diagnostics', 'database: op: stacked diagnostics (SQLSTATE 0Z002)'],
    ['39P01', 'trigger protocol violated', 'database: op: trigger protocol violated (SQLSTATE 39P01)'],
    // Also codes that end in (or start with) five capitals are no SQLSTATE: no suffix.
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1', 'database: op: connect ECONNREFUSED 127.0.0.1:1'],
    ['5730', 'short', 'database: op: short'],
    ['57P011', 'long', 'database: op: long'],
    ['57p01', 'lower case', 'database: op: lower case'],
    ['32', 'starts with neither 22 nor 23 but ends with one', 'database: op: starts with neither 22 nor 23 but ends with one'],
  ])('[ERR-internal] code %s is unavailability, not integrity', (code, message, expected) => {
    const error = translatePgError(pgError(code, message), 'op');
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect(error.message).toBe(expected);
  });

  it('[ERR-internal] a code that merely ends in 22 or 23 is no integrity fault', () => {
    expect(translatePgError(pgError('XX022', 'x'), 'op').message).toBe('database: op: x (SQLSTATE XX022)');
    expect(translatePgError(pgError('XX023', 'x'), 'op').message).toBe('database: op: x (SQLSTATE XX023)');
  });

  it('[ERR-internal] non-errors and errors without a message still say something', () => {
    expect(translatePgError(null, 'op').message).toBe('database: op: null');
    expect(translatePgError(undefined, 'op').message).toBe('database: op: undefined');
    expect(translatePgError(42, 'op').message).toBe('database: op: 42');
    expect(translatePgError({ code: '57P01' }, 'op').message).toBe('database: op: 57P01 (SQLSTATE 57P01)');
    expect(translatePgError({ code: '57P01', message: '' }, 'op').message).toBe('database: op: 57P01 (SQLSTATE 57P01)');
    expect(translatePgError({ message: '' }, 'op').message).toBe('database: op: unknown error');
    expect(translatePgError({}, 'op').message).toBe('database: op: unknown error');
    expect(translatePgError({ message: 7 }, 'op').message).toBe('database: op: unknown error');
    // A code that is no string is no code.
    expect(translatePgError({ code: 23505, message: 'numeric code' }, 'op').message).toBe('database: op: numeric code');
  });

  it('[ERR-internal] a constraint is named only when it is a plain identifier', () => {
    const named = (constraint: unknown): string =>
      translatePgError(Object.assign(new Error('dup'), { code: '23505', constraint }), 'add user').message;
    expect(named('Orders_Az_09')).toBe('database: add user: duplicate key (constraint Orders_Az_09)');
    for (const unsafe of ['a b', 'key"; hunter2', 'x y_key', 'users_key pw', 7, '']) {
      expect(named(unsafe)).toBe('database: add user: duplicate key');
    }
  });
});

describe('scrub: no password in any log line or error', () => {
  it('[ERR-internal] the secrets listed are replaced wherever they are; an empty one is ignored', () => {
    expect(scrub('hunter2 then s3cret then hunter2', ['hunter2', '', 's3cret'])).toBe('*** then *** then ***');
    expect(scrub('nothing to hide', [''])).toBe('nothing to hide');
    expect(translatePgError(pgError('28P01', 'password authentication failed: hunter2'), 'connect', ['hunter2']).message).toBe(
      'database: connect: password authentication failed: *** (SQLSTATE 28P01)',
    );
    expect(translatePgError(pgError('23514', 'bad hunter2', 'c_key'), 'insert', ['hunter2']).message).toBe(
      'database: insert: integrity: row rejected by the database (constraint c_key): bad *** (SQLSTATE 23514)',
    );
  });

  it('[ERR-internal] a URL credential is replaced: any scheme, anywhere in the text, user kept, every one of them', () => {
    expect(scrub('postgres://orders:hunter2@db:5432/orders')).toBe('postgres://orders:***@db:5432/orders');
    expect(scrub('redis://:s3cret@redis:6379 and nats://u:p@nats:4222')).toBe('redis://:***@redis:6379 and nats://u:***@nats:4222');
    expect(scrub('at h2://a:b@h')).toBe('at h2://a:***@h');
    expect(translatePgError(new Error('could not connect with postgres://u:hunter2@db:5432/x'), 'connect').message).toBe(
      'database: connect: could not connect with postgres://u:***@db:5432/x',
    );
  });

  it('[ERR-internal] a credential stops at white space; a URL without a password is kept', () => {
    expect(scrub('postgres://u@db/x and postgres://db/x')).toBe('postgres://u@db/x and postgres://db/x');
    expect(scrub('postgres://u: pw@db')).toBe('postgres://u: pw@db');
    expect(scrub('postgres://u u:pw@db')).toBe('postgres://u u:pw@db');
    expect(scrub('postgres://u:pw x@db')).toBe('postgres://u:pw x@db');
    // Without secrets, text that holds no URL credential is kept as it is, whatever it says.
    expect(scrub('Stryker was here: text with no credential')).toBe('Stryker was here: text with no credential');
    expect(translatePgError(new Error('Stryker was here'), 'op').message).toBe('database: op: Stryker was here');
  });
});

// Missing POSTGRES_DSN, named and never echoed: src/config/rules.test.ts.
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

  it('a DSN without a host names localhost; its path is the database, as written', () => {
    expect(describeDsn('postgres:///orders')).toBe('localhost:5432/orders');
    // An opaque path (no //) has no leading slash: only a leading one is dropped.
    expect(describeDsn('postgres:orders/x')).toBe('localhost:5432/orders/x');
  });

  it('[CONFIG-no-secret-echo] an unparseable DSN is a secret as a whole: it may hold the password anywhere', () => {
    expect(dsnSecrets('host=db password=s3cret')).toEqual(['host=db password=s3cret']);
  });
});
