import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { hashPassword } from '../../src/service/password-hasher.ts';

/** What the fleets of spawned replicas (test/faults/fleet.ts, test/cluster/cluster.ts) share. */

/** A new user written into `pool`'s users table as `orders-admin users add` does; its credentials. */
export async function insertUser(pool: pg.Pool, prefix: string): Promise<{ username: string; password: string }> {
  const username = `${prefix}-${randomUUID()}`;
  const password = `pw-${randomBytes(9).toString('hex')}`;
  await pool.query('INSERT INTO users (id, username, password_hash) VALUES ($1, $2, $3)', [
    randomUUID(),
    username,
    await hashPassword(password, { N: 1024, r: 8, p: 1 }),
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
