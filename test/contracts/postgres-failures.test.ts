import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../../src/adapters/postgres/database.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { captureLogger, postgresConfig } from './postgres-harness.ts';
import { listenLocal } from '../support/ports.ts';

/** Failure paths that need no database server at all, so they always run. */
const SECRET = 's3cret';
const log = captureLogger();

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ErrUnavailable);
  return error as Error;
}

describe('PostgresDatabase against a closed port', () => {
  const dsn = `postgres://u:${SECRET}@127.0.0.1:1/x`;

  it('init fails fast, names POSTGRES_DSN and the target, never the password', async () => {
    const db = new PostgresDatabase(postgresConfig(dsn), log.logger);
    const error = await failure(db.init());
    expect(error.message).toContain('POSTGRES_DSN');
    expect(error.message).toContain('127.0.0.1:1/x');
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(JSON.stringify({ message: error.message, stack: error.stack, cause: error.cause })).not.toContain(SECRET);
    await db.stop();
  });

  it('health rejects without the password', async () => {
    const db = new PostgresDatabase(postgresConfig(dsn), log.logger);
    const error = await failure(db.health());
    expect(error.message).toMatch(/^database: health: /);
    expect(error.message).not.toContain(SECRET);
    await db.stop();
  });

  it('a percent-encoded password is redacted in every form', async () => {
    const db = new PostgresDatabase(postgresConfig('postgres://u:p%40ss%3Aw0rd@127.0.0.1:1/x'), log.logger);
    const error = await failure(db.init());
    expect(error.message).not.toMatch(/p%40ss|p@ss|w0rd/);
    await db.stop();
  });

  it('logged nothing secret', () => {
    expect(JSON.stringify(log.lines())).not.toContain(SECRET);
  });
});

describe('PostgresDatabase against a server that accepts but never answers', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    port = await listenLocal(server);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('init gives up after the connect timeout, without retrying', async () => {
    const db = new PostgresDatabase(postgresConfig(`postgres://u:${SECRET}@127.0.0.1:${port}/x`, { connectTimeoutMs: 300 }), log.logger);
    // The message names the timeout: init waited for it rather than failing otherwise (no clock is read).
    const error = await failure(db.init());
    expect(error.message).toMatch(/POSTGRES_DSN.*timeout/);
    expect(error.message).not.toContain(SECRET);
    await db.stop();
  });

  it('health is bounded by its own timeout, shorter than the connect timeout', async () => {
    const db = new PostgresDatabase(
      postgresConfig(`postgres://u:${SECRET}@127.0.0.1:${port}/x`, { connectTimeoutMs: 5_000, healthTimeoutMs: 200 }),
      log.logger,
    );
    const error = await failure(db.health());
    expect(error.message).toBe('database: health check timed out after 200 ms');
    for (const socket of sockets) socket.destroy(); // else stop() waits out the 5 s connect attempt
    await db.stop();
  });
});
