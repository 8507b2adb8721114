import { describe, expect, it } from 'vitest';
import type { QueryResult } from 'pg';
import { ErrUnavailable } from '../../domain/errors.ts';
import type { Order } from '../../domain/order.ts';
import type { Placement } from '../../ports/order-repository.ts';
import type { NamedStatement, Queryable, Transactional } from './database.ts';
import { LIST_DEEP_SQL, LIST_SHALLOW_SQL, PostgresOrderRepository } from './order-repository.ts';

/** A database that records each statement and answers it with `answer` (rows, or a rejection). */
function fakeDatabase(answer: (text: string) => Array<Record<string, unknown>> | Error) {
  const statements: Array<string | NamedStatement> = [];
  const query: Queryable['query'] = async <R>(statement: string | NamedStatement) => {
    statements.push(statement);
    const rows = answer(typeof statement === 'string' ? statement : statement.text);
    if (rows instanceof Error) throw rows;
    return { rows, rowCount: rows.length } as unknown as QueryResult<R & object>;
  };
  const db: Transactional = { query, transaction: (work) => work({ query }) };
  return { db, statements };
}

const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const order: Order = { id: 'o1', userId: 'u1', item: 'widget', quantity: 2, status: 'pending', createdAt: new Date(1_000) };
const row = (fields: Record<string, unknown> = {}) => ({
  id: 'o1',
  user_id: 'u1',
  item: 'widget',
  quantity: 2,
  status: 'pending',
  created_at: new Date(1_000),
  ...fields,
});
const placement: Placement = {
  order,
  event: { id: 'e1', event: { order_id: 'o1', user_id: 'u1', item: 'widget', quantity: 2, created_at: '1970-01-01T00:00:01.000Z' } },
  idempotency: { key: 'k', fingerprint: 'f', now: new Date(0), expiresAt: new Date(60_000) },
};

describe('PostgresOrderRepository', () => {
  it('reads are named statements, prepared once per connection: find, first pages and deep pages each their own', async () => {
    const { db, statements } = fakeDatabase(() => [row()]);
    const repo = new PostgresOrderRepository(db);
    expect(await repo.findById('o1')).toEqual(order);
    expect(await repo.listByUser('u1', { limit: 10, offset: 0 })).toEqual([order]);
    expect(await repo.listByUser('u1', { limit: 10, offset: 5_000 })).toEqual([order]);
    expect(statements.map((s) => (typeof s === 'string' ? s : s.name))).toEqual(['orders_find', 'orders_list_shallow', 'orders_list_deep']);
    expect(statements.slice(1)).toEqual([
      { name: 'orders_list_shallow', text: LIST_SHALLOW_SQL, values: ['u1', 10, 0] },
      { name: 'orders_list_deep', text: LIST_DEEP_SQL, values: ['u1', 10, 5_000] },
    ]);
  });

  it('[ERR-internal] a failing statement is translated, naming the operation', async () => {
    const repo = new PostgresOrderRepository(fakeDatabase(refused).db);
    const failures = await Promise.all([
      repo.insert(order).catch((e: unknown) => e),
      repo.place(placement).catch((e: unknown) => e),
      repo.findById('o1').catch((e: unknown) => e),
      repo.listByUser('u1', { limit: 10, offset: 0 }).catch((e: unknown) => e),
    ]);
    for (const failure of failures) expect(failure).toBeInstanceOf(ErrUnavailable);
    expect(failures.map((f) => (f as Error).message)).toEqual(
      ['insert order', 'place order', 'find order', 'list orders'].map((op) => `database: ${op}: connect ECONNREFUSED 127.0.0.1:5432`),
    );
  });

  it('[ERR-internal] a claimed key whose order cannot be read back fails the create instead of answering without an order', async () => {
    // The claim conflicts (no row returned), and the join finds no order for it.
    const repo = new PostgresOrderRepository(fakeDatabase(() => []).db);
    const error = await repo.place(placement).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect((error as Error).message).toBe('database: place order: idempotency key claimed but its order is missing');
  });
});
