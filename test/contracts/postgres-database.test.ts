import type { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { ConfigError } from '../../src/config/env.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { startFakePostgres, type FakePostgres } from '../support/fake-postgres.ts';
import { VERSIONS } from './postgres-database.contract.ts';
import { captureLogger, postgresConfig } from './postgres-harness.ts';

/**
 * PostgresDatabase's own behaviour (pools, transactions, health, migrate's connection) against a fake
 * server that records what pg sends (test/support/fake-postgres.ts); the SQL itself is the contracts'.
 */
let fake: FakePostgres;
const databases: PostgresDatabase[] = [];
let log: ReturnType<typeof captureLogger>;

function database(overrides: Parameters<typeof postgresConfig>[1] = {}): PostgresDatabase {
  const db = new PostgresDatabase(postgresConfig(`postgres://u:pw@127.0.0.1:${fake.port}/x`, overrides), log.logger);
  databases.push(db);
  return db;
}

beforeEach(async () => {
  fake = await startFakePostgres();
  log = captureLogger();
});

afterEach(async () => {
  for (const db of databases.splice(0)) await db.stop();
  await fake.stop();
});

const texts = (): string[] => fake.statements.map((s) => s.text);

describe('PostgresDatabase: pools', () => {
  it('[HEALTH-nodes] the component is the health node "database"', () => {
    expect(database().name).toBe('database');
  });

  it('a schema name that would need quoting is refused before any connection', () => {
    expect(() => database({ schema: 'x"; drop' })).toThrow(ConfigError);
    expect(fake.startups).toEqual([]);
  });

  it('[EVT-7-delivery] request work and background work come from their own pools, each named to the server', async () => {
    const db = database();
    await db.query('SELECT 1');
    await db.background.query('SELECT 2');
    expect(await db.background.transaction(async (tx) => (await tx.query('SELECT 3')).rowCount)).toBe(0);
    expect(fake.startups.map((s) => s.application_name)).toEqual(['orders', 'orders-background']);
    // Without a schema the server's own search_path is kept.
    expect(texts()).toEqual(['SELECT 1', 'SELECT 2', 'BEGIN', 'SELECT 3', 'COMMIT']);
  });

  it('[EVT-7-delivery] the background pool opens at most two connections by default', async () => {
    fake.startup = 'hold';
    const db = database({ connectTimeoutMs: 5_000 });
    const queries = [1, 2, 3].map((n) => db.background.query(`SELECT ${n}`).catch((e: unknown) => e));
    await expect.poll(() => fake.startups.length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.startups.length).toBe(2);
    fake.startup = { code: '57P03', message: 'the database system is starting up' };
    fake.dropConnections();
    for (const failure of await Promise.all(queries)) expect(failure).toBeInstanceOf(Error);
  });

  it('with a schema, every new connection of both pools is on its search_path first', async () => {
    const db = database({ schema: 't_abc' });
    await db.query('SELECT 1');
    await db.background.query('SELECT 2');
    expect(fake.statements.map(({ text, connection }) => [connection, text])).toEqual([
      [0, 'SET search_path TO "t_abc"'],
      [0, 'SELECT 1'],
      [1, 'SET search_path TO "t_abc"'],
      [1, 'SELECT 2'],
    ]);
  });

  it('connections ask for TCP keepalive, so a peer that vanished is noticed', async () => {
    const keepAlive = vi.spyOn(Socket.prototype, 'setKeepAlive');
    try {
      await database().query('SELECT 1');
      expect(keepAlive).toHaveBeenCalledWith(true, expect.any(Number));
    } finally {
      keepAlive.mockRestore();
    }
  });

  it('request statements are prepared under their name, or sent unnamed when preparedStatements is off', async () => {
    const statement = { name: 'orders_probe', text: 'SELECT $1::int', values: [1] };
    await database().query(statement);
    await database({ preparedStatements: false }).query(statement);
    await database().background.query(statement);
    expect(fake.statements.map((s) => s.name)).toEqual(['orders_probe', '', 'orders_probe']);
  });

  it('poolStats counts the request pool: a released connection is idle', async () => {
    const db = database();
    expect(db.poolStats()).toEqual({ total: 0, idle: 0, waiting: 0 });
    await db.query('SELECT 1');
    expect(db.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });
  });

  it('an idle connection the server drops is logged with its error, not fatal', async () => {
    const db = database();
    await db.query('SELECT 1');
    fake.dropConnections();
    await expect
      .poll(() => log.lines().filter((l) => l.msg === 'database: idle connection lost'))
      .toEqual([expect.objectContaining({ level: 'error', error: 'Connection terminated unexpectedly' })]);
    await db.query('SELECT 2');
  });
});

describe('PostgresDatabase: transactions', () => {
  it('a rejected work is rolled back and its connection, still sound, goes back to the pool', async () => {
    const db = database({ poolSize: 1 });
    const failure = new Error('work failed');
    await expect(db.transaction(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(texts()).toEqual(['BEGIN', 'ROLLBACK']);
    expect(db.poolStats()).toEqual({ total: 1, idle: 1, waiting: 0 });
    expect(fake.openConnections()).toBe(1);
  });

  it('a connection whose ROLLBACK fails is destroyed, not pooled', async () => {
    fake.fail = (text) => (text === 'ROLLBACK' ? { code: '57P01', message: 'terminating connection' } : undefined);
    const db = database({ poolSize: 1 });
    const failure = new Error('work failed');
    await expect(db.transaction(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(db.poolStats()).toEqual({ total: 0, idle: 0, waiting: 0 });
    await expect.poll(() => fake.openConnections()).toBe(0);
  });

  it("a checked-out connection's error event does not crash the process, and its listener goes with the release", async () => {
    const db = database({ poolSize: 1 });
    let client: EventEmitter | undefined;
    // pg emits this when the socket dies between two queries of a transaction.
    const result = await db.transaction(async (tx) => {
      client = tx as unknown as EventEmitter;
      client.emit('error', new Error('Connection terminated unexpectedly'));
      return 'done';
    });
    expect(result).toBe('done');
    const listeners = client?.listenerCount('error');
    for (let i = 0; i < 5; i += 1) await db.transaction(async () => undefined);
    expect(client?.listenerCount('error')).toBe(listeners);
  });
});

describe('PostgresDatabase: health', () => {
  it('health probes with a query on a pooled connection, and leaves no timer behind', async () => {
    const db = database();
    await db.health();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 3; i += 1) await db.health();
    expect(timers()).toBeLessThanOrEqual(before);
    expect(new Set(texts())).toEqual(new Set(['SELECT 1']));
  });
});

describe('PostgresDatabase: migrate', () => {
  it('applied migrations are logged once; a run with nothing to apply logs nothing', async () => {
    const db = database();
    expect(await db.migrate()).toEqual(VERSIONS);
    fake.rowCount = (text) => (text.startsWith('SELECT 1 FROM schema_migrations') ? 1 : 0);
    expect(await db.migrate()).toEqual([]);
    expect(log.lines().filter((l) => l.msg === 'database: migrations applied')).toEqual([
      expect.objectContaining({ level: 'info', applied: VERSIONS }),
    ]);
  });

  it('[LIFE-2-init-connect] a failing migration fails init, naming the target and the SQLSTATE, and destroys its connection', async () => {
    fake.fail = (text) =>
      text.includes('CREATE TABLE orders') ? { code: '42P07', message: 'relation "orders" already exists' } : undefined;
    const db = database();
    const error = await db.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect((error as Error).message).toBe(
      `database: migrate (127.0.0.1:${fake.port}/x): migration ${VERSIONS[0]} failed: relation "orders" already exists (SQLSTATE 42P07)`,
    );
    // It may be mid-transaction or still hold the advisory lock.
    expect(db.poolStats().total).toBe(0);
    await expect.poll(() => fake.openConnections()).toBe(0);
  });

  it('[LIFE-2-init-connect] a refusal without a message is named by its SQLSTATE, or as unknown', async () => {
    fake.startup = { code: '28P01' };
    const coded = await database()
      .init()
      .catch((e: unknown) => e);
    expect((coded as Error).message).toBe(`database: cannot connect to POSTGRES_DSN (127.0.0.1:${fake.port}/x): 28P01`);
    fake.startup = {};
    const bare = await database()
      .init()
      .catch((e: unknown) => e);
    expect((bare as Error).message).toBe(`database: cannot connect to POSTGRES_DSN (127.0.0.1:${fake.port}/x): unknown error`);
  });
});
