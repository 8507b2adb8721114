import { describe, expect, it } from 'vitest';
import { ErrUnavailable } from '../src/domain/errors.ts';
import type { Placement } from '../src/ports/order-repository.ts';
import { CoalescingOrderRepository, PlacementCoalescer, type PlacementRow } from './placement-coalescer.ts';

const row = (n: number): PlacementRow => ({
  order: { id: `o${n}`, userId: 'u', item: 'i', quantity: 1, status: 'pending', createdAt: new Date(0) },
  eventId: `e${n}`,
  payload: '{}',
});
const ids = (rows: readonly PlacementRow[]): string[] => rows.map((r) => r.order.id);

describe('PlacementCoalescer', () => {
  it('[SVC-create-durable] creates of one turn share a statement, bounded by maxRows; the next turn starts another', async () => {
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (rows) => void statements.push(ids(rows)), 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => coalescer.place(row(n))));
    await coalescer.place(row(6));
    // The flushes scheduled for statements that filled up find nothing, and write nothing.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statements).toEqual([['o1', 'o2'], ['o3', 'o4'], ['o5'], ['o6']]);
  });

  it('[SVC-create-durable] creates arriving in later callbacks of one loop phase share the next statement', async () => {
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (rows) => void statements.push(ids(rows)));
    const placed: Array<Promise<void>> = [coalescer.place(row(1))];
    setImmediate(() => placed.push(coalescer.place(row(3))));
    placed.push(coalescer.place(row(2)));
    setImmediate(() => placed.push(coalescer.place(row(4))));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(placed);
    expect(statements).toEqual([
      ['o1', 'o2'],
      ['o3', 'o4'],
    ]);
  });

  it('an error a row can cause (class 22/23) is retried row by row: only that row fails', async () => {
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (rows) => {
      statements.push(ids(rows));
      if (ids(rows).includes('o2')) throw Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => coalescer.place(row(n))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements).toEqual([['o1', 'o2', 'o3'], ['o1'], ['o2'], ['o3']]);
  });

  it('any other error fails every row of the statement, with no retries', async () => {
    let statements = 0;
    const refused = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
    const coalescer = new PlacementCoalescer(async () => {
      statements += 1;
      throw refused;
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => coalescer.place(row(n))));
    expect(results).toEqual(Array(3).fill({ status: 'rejected', reason: refused }));
    expect(statements).toBe(1);
  });
});

describe('PlacementCoalescer: which errors are retried row by row', () => {
  const retried = async (error: unknown, rows: number): Promise<{ statements: string[][]; results: unknown[] }> => {
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (written) => {
      statements.push(ids(written));
      throw error;
    });
    const numbers = Array.from({ length: rows }, (_, i) => i + 1);
    const results = await Promise.allSettled(numbers.map((n) => coalescer.place(row(n))));
    return { statements, results: results.map((r) => (r.status === 'rejected' ? r.reason : 'fulfilled')) };
  };

  it('[SVC-create-durable] a class 23 error is retried row by row too', async () => {
    const duplicate = Object.assign(new Error('duplicate key'), { code: '23505' });
    expect(await retried(duplicate, 2)).toEqual({ statements: [['o1', 'o2'], ['o1'], ['o2']], results: [duplicate, duplicate] });
  });

  it('[SVC-create-durable] a statement of one row is not retried, whatever its error', async () => {
    const duplicate = Object.assign(new Error('duplicate key'), { code: '23505' });
    expect(await retried(duplicate, 1)).toEqual({ statements: [['o1']], results: [duplicate] });
  });

  it.each([
    ['an error without a code', new Error('Connection terminated unexpectedly')],
    ['a numeric code', Object.assign(new Error('numeric'), { code: 23505 })],
    ['a code that only ends in 22 or 23', Object.assign(new Error('x'), { code: 'XX023' })],
    ['null', null],
    ['undefined', undefined],
    ['a string', '23505'],
  ])('[SVC-create-durable] %s fails every row of the statement, with no retries', async (_name, error) => {
    expect(await retried(error, 2)).toEqual({ statements: [['o1', 'o2']], results: [error, error] });
  });

  it('[SVC-create-durable] maxRows must be at least 1; 1 writes every create alone', async () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => new PlacementCoalescer(async () => undefined, bad)).toThrow(
        new RangeError('PlacementCoalescer: maxRows must be at least 1'),
      );
    }
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (rows) => void statements.push(ids(rows)), 1);
    await Promise.all([1, 2].map((n) => coalescer.place(row(n))));
    expect(statements).toEqual([['o1'], ['o2']]);
  });
});

describe('CoalescingOrderRepository', () => {
  const order = row(1).order;
  const placement = { order, event: { id: 'e1', event: { order_id: 'o1' } } } as unknown as Placement;
  /** A database that records each statement outside a transaction, and answers a transaction with `replayed`. */
  const recording = (statements: unknown[]) =>
    ({
      query: async (statement: unknown) => (statements.push(statement), { rows: [], rowCount: 0 }),
      transaction: async () => ({ outcome: 'replayed', order }),
    }) as never;

  it('[SVC-create-durable] a create without a key is one statement and answers created; a key goes to the plain repository', async () => {
    const statements: unknown[] = [];
    const repository = new CoalescingOrderRepository(recording(statements));
    expect(await repository.place(placement)).toEqual({ outcome: 'created', order });
    expect(statements).toHaveLength(1);
    // A named statement: prepared once per connection, as every request's statements are.
    expect(statements[0]).toMatchObject({ name: 'orders_place_many' });
    // With a key: PostgresOrderRepository's place, its own transaction.
    expect(await repository.place({ ...placement, idempotency: {} } as Placement)).toEqual({ outcome: 'replayed', order });
    expect(statements).toHaveLength(1);
  });

  it("[SVC-create-durable] reads are the plain repository's statements", async () => {
    const statements: unknown[] = [];
    const repository = new CoalescingOrderRepository(recording(statements));
    expect(await repository.findById('o1')).toBeUndefined();
    expect(statements).toEqual([expect.objectContaining({ name: 'orders_find' })]);
  });

  it('[ERR-internal] a failed statement is translated for the caller', async () => {
    const failing = { query: () => Promise.reject(Object.assign(new Error('terminating connection'), { code: '57P01' })) } as never;
    const error = await new CoalescingOrderRepository(failing).place(placement).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrUnavailable);
    expect((error as Error).message).toBe('database: place order: terminating connection (SQLSTATE 57P01)');
  });
});
