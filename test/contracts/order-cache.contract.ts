import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Order } from '../../src/domain/order.ts';
import type { OrderCache } from '../../src/ports/order-cache.ts';

export interface OrderCacheUnderTest {
  readonly cache: OrderCache;
  /** Releases whatever the factory opened (connections, keys). */
  readonly cleanup?: () => Promise<void>;
}

export function sampleOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: randomUUID(),
    userId: randomUUID(),
    item: 'widget ✓',
    quantity: 3,
    status: 'pending',
    // Non-zero milliseconds: a store that truncates to seconds fails the round trip.
    createdAt: new Date('2024-05-06T07:08:09.123Z'),
    ...overrides,
  };
}

/** One OrderCache contract, run over every implementation: one contract, many implementations. */
export function orderCacheContract(implementation: string, make: () => Promise<OrderCacheUnderTest>): void {
  describe(`OrderCache contract/${implementation}`, () => {
    let subject: OrderCacheUnderTest;

    beforeEach(async () => {
      subject = await make();
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('get of an unknown id is a miss (undefined), not an error', async () => {
      await expect(subject.cache.get(randomUUID())).resolves.toBeUndefined();
    });

    it('set then get returns every field of that id, createdAt as a Date to the millisecond', async () => {
      const a = sampleOrder({ item: 'a' });
      const b = sampleOrder({ item: 'b' });
      await subject.cache.set(a);
      await subject.cache.set(b);
      const got = await subject.cache.get(a.id);
      expect(got?.createdAt).toBeInstanceOf(Date);
      // toEqual compares Dates by their time, to the millisecond.
      expect(got).toEqual(a);
      await expect(subject.cache.get(b.id)).resolves.toEqual(b);
    });

    it('set of the same id overwrites', async () => {
      const first = sampleOrder({ item: 'first', quantity: 1 });
      const second = { ...first, item: 'second', quantity: 2, createdAt: new Date('2025-01-02T03:04:05.678Z') };
      await subject.cache.set(first);
      await subject.cache.set(second);
      await expect(subject.cache.get(first.id)).resolves.toEqual(second);
    });
  });
}
