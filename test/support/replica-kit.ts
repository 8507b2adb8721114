import { randomBytes, randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { expect } from 'vitest';
import { ORDER_STREAM_DEFAULTS } from '../../src/adapters/nats/order-stream.ts';
import { DEFAULT_KEY_PREFIX } from '../../src/adapters/redis/connection.ts';
import { hashPassword } from '../../src/service/password-hasher.ts';
import { TEST_PASSWORD_COST } from './in-process-app.ts';

/** What the suites running executables on real backends (fault fleet, cluster, durability, shutdown) share. */

/** A new user written into `pool`'s users table as `orders-admin users add` does; its credentials. */
export async function insertUser(pool: pg.Pool, prefix: string): Promise<{ username: string; password: string }> {
  const username = `${prefix}-${randomUUID()}`;
  const password = `pw-${randomBytes(9).toString('hex')}`;
  await pool.query('INSERT INTO users (id, username, password_hash) VALUES ($1, $2, $3)', [
    randomUUID(),
    username,
    await hashPassword(password, TEST_PASSWORD_COST),
  ]);
  return { username, password };
}

/** `order placed` lines per order id, over the parsed log lines of every process given. */
export function placedCounts(lines: Iterable<Record<string, unknown>>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const id = line['order_id'];
    if (line['msg'] === 'order placed' && typeof id === 'string') counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/**
 * Removes what executables run on POSTGRES_SCHEMA `schema` of the shared servers left there: the cache
 * entries of its orders and its JetStream stream (ORDERS_<schema>), both best effort, and the schema itself.
 */
export async function dropSchemaRun(
  env: { readonly dsn: string; readonly redisAddr: string; readonly natsUrl: string },
  schema: string,
): Promise<void> {
  const db = new pg.Client({ connectionString: env.dsn });
  await db.connect();
  try {
    const ids = await db.query<{ id: string }>(`SELECT id FROM "${schema}".orders`).then(
      (r) => r.rows.map((row) => row.id),
      () => [],
    );
    if (ids.length > 0) {
      const redis = new Redis(`redis://${env.redisAddr}`, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect().then(
        () => redis.del(...ids.map((id) => `${DEFAULT_KEY_PREFIX}${id}`)),
        () => undefined,
      );
      redis.disconnect();
    }
    const nats = await connect({ servers: env.natsUrl.split(',') }).catch(() => undefined);
    if (nats !== undefined)
      await (await jetstreamManager(nats)).streams.delete(`${ORDER_STREAM_DEFAULTS.stream}_${schema}`).catch(() => undefined);
    await nats?.close().catch(() => undefined);
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await db.end();
  }
}

/** Fails naming the secret's label (never its value) if any text contains any secret. */
export function expectNoSecrets(texts: readonly string[], secrets: Readonly<Record<string, string>>): void {
  expect(texts.length).toBeGreaterThan(0);
  for (const [label, secret] of Object.entries(secrets)) {
    expect(secret.length, `secret ${label} is too short to search for`).toBeGreaterThanOrEqual(8);
    const hits = texts.filter((text) => text.includes(secret)).length;
    expect(hits, `${label} appears in ${hits} captured line(s)`).toBe(0);
  }
}
