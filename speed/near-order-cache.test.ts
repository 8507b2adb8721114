import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../fakes/memory-cache.ts';
import { ErrUnavailable } from '../src/domain/errors.ts';
import { createOrder, type Order } from '../src/domain/order.ts';
import type { OrderCache } from '../src/ports/order-cache.ts';
import { NearOrderCache } from './near-order-cache.ts';

const USER = '11111111-1111-4111-8111-111111111111';
const order = (n: number): Order =>
  createOrder({ userId: USER, item: `item ${n}`, quantity: 1 }, `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, new Date(0));

/** The shared cache, counting the reads that reached it. */
function shared(): { cache: OrderCache & { reads: number }; memory: MemoryOrderCache } {
  const memory = new MemoryOrderCache();
  const cache = {
    reads: 0,
    get(id: string) {
      cache.reads += 1;
      return memory.get(id);
    },
    set: (o: Order) => memory.set(o),
  };
  return { cache, memory };
}

function clockAt(ms: { now: number }) {
  return { now: () => new Date(ms.now) };
}

describe('NearOrderCache (rule SVC-near-cache)', () => {
  it('a near miss reads the shared cache and remembers a hit; a miss there stays a miss', async () => {
    const { cache, memory } = shared();
    await memory.set(order(2));
    const near = new NearOrderCache(cache);
    expect(await near.get(order(2).id)).toEqual(order(2));
    expect(await near.get(order(2).id)).toEqual(order(2));
    expect(cache.reads).toBe(1);
    expect(await near.get(order(3).id)).toBeUndefined();
    expect(await near.get(order(3).id)).toBeUndefined();
    expect(cache.reads).toBe(3);
  });

  it('an entry lapses after ttlMs: the next read goes to the shared cache again', async () => {
    const { cache } = shared();
    const time = { now: 1_000 };
    const near = new NearOrderCache(cache, { ttlMs: 100, clock: clockAt(time) });
    await near.set(order(4));
    time.now += 99;
    await near.get(order(4).id);
    expect(cache.reads).toBe(0);
    time.now += 2;
    expect(await near.get(order(4).id)).toEqual(order(4));
    expect(cache.reads).toBe(1);
  });

  it('holds at most maxEntries, dropping the least recently used first', async () => {
    const { cache } = shared();
    const near = new NearOrderCache(cache, { maxEntries: 4 });
    for (let n = 1; n <= 5; n++) await near.set(order(n));
    expect(near.size).toBe(4);
    await near.get(order(2).id); // a hit: 2 is now the most recently used
    expect(cache.reads).toBe(0);
    await near.set(order(6)); // drops 3, the least recently used, not 2
    for (const n of [2, 4, 5, 6]) await near.get(order(n).id);
    expect(cache.reads).toBe(0);
    await near.get(order(1).id);
    await near.get(order(3).id);
    expect(cache.reads).toBe(2);
    expect(near.size).toBe(4);
  });

  it('a failed shared write is passed on and not remembered; a shared read failure is passed on', async () => {
    const failing: OrderCache = {
      get: () => Promise.reject(new ErrUnavailable('cache: get: down')),
      set: () => Promise.reject(new ErrUnavailable('cache: set: down')),
    };
    const near = new NearOrderCache(failing);
    await expect(near.set(order(6))).rejects.toBeInstanceOf(ErrUnavailable);
    expect(near.size).toBe(0);
    await expect(near.get(order(6).id)).rejects.toBeInstanceOf(ErrUnavailable);
  });
});
