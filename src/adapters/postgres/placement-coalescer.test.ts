import { describe, expect, it } from 'vitest';
import { PlacementCoalescer, type PlacementRow } from './placement-coalescer.ts';

const row = (n: number): PlacementRow => ({
  order: { id: `o${n}`, userId: 'u', item: 'i', quantity: 1, status: 'pending', createdAt: new Date(0) },
  eventId: `e${n}`,
  payload: '{}',
});
const ids = (rows: readonly PlacementRow[]): string[] => rows.map((r) => r.order.id);

describe('PlacementCoalescer', () => {
  it('creates of one turn share a statement, bounded by maxRows; the next turn starts another', async () => {
    const statements: string[][] = [];
    const coalescer = new PlacementCoalescer(async (rows) => void statements.push(ids(rows)), 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => coalescer.place(row(n))));
    await coalescer.place(row(6));
    expect(statements).toEqual([['o1', 'o2'], ['o3', 'o4'], ['o5'], ['o6']]);
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
