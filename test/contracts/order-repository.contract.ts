import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ErrConflict } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import type { OrderRepository } from '../../src/ports/order-repository.ts';
import { sampleOrder } from './order-cache.contract.ts';

export type OrderRepositoryFactory = () => OrderRepository | Promise<OrderRepository>;

/**
 * One contract, many implementations (fake, PGlite, real Postgres). Every case uses fresh random
 * user and order ids, so implementations may share one database across cases.
 */
export function orderRepositoryContract(name: string, factory: OrderRepositoryFactory): void {
  describe(`OrderRepository contract/${name}`, () => {
    let repo: OrderRepository;
    beforeEach(async () => {
      repo = await factory();
    });

    const base = Date.parse('2024-05-06T07:08:09.123Z');
    const order = (userId: string, minutes = 0, fields: Partial<Order> = {}): Order =>
      sampleOrder({ userId, createdAt: new Date(base + minutes * 60_000), ...fields });
    async function insertAll(orders: readonly Order[]): Promise<void> {
      for (const o of orders) await repo.insert(o);
    }
    const ids = (orders: readonly Order[]): string[] => orders.map((o) => o.id);

    it('insert then findById returns every field, createdAt to the millisecond', async () => {
      const stored = order(randomUUID(), 0, {
        item: 'Café ☕ "quoted" \'single\' \\ back',
        quantity: 2_147_483_647,
        createdAt: new Date('2024-02-29T23:59:59.987Z'),
      });
      await repo.insert(stored);
      const found = await repo.findById(stored.id);
      expect(found?.createdAt).toBeInstanceOf(Date);
      expect({ ...found, createdAt: found?.createdAt.toISOString() }).toEqual({
        ...stored,
        createdAt: '2024-02-29T23:59:59.987Z',
      });
    });

    it('findById of an unknown id is undefined', async () => {
      expect(await repo.findById(randomUUID())).toBeUndefined();
    });

    it('a duplicate id is rejected with ErrConflict and the first row is kept', async () => {
      const first = order(randomUUID(), 0, { item: 'first' });
      await repo.insert(first);
      await expect(repo.insert({ ...first, item: 'second', userId: randomUUID() })).rejects.toBeInstanceOf(ErrConflict);
      expect((await repo.findById(first.id))?.item).toBe('first');
    });

    it('callers cannot mutate stored state through returned or inserted objects', async () => {
      const user = randomUUID();
      const original = order(user);
      const inserted = { ...original, createdAt: new Date(original.createdAt.getTime()) };
      await repo.insert(inserted);
      inserted.createdAt.setTime(0);
      const found = await repo.findById(original.id);
      found?.createdAt.setTime(0);
      const [listed] = await repo.listByUser(user, { limit: 10, offset: 0 });
      listed?.createdAt.setTime(0);
      expect((await repo.findById(original.id))?.createdAt.getTime()).toBe(original.createdAt.getTime());
      expect((await repo.listByUser(user, { limit: 10, offset: 0 }))[0]?.createdAt.getTime()).toBe(original.createdAt.getTime());
    });

    it('listByUser is newest first regardless of insertion order, to the millisecond', async () => {
      const user = randomUUID();
      const a = order(user, 0);
      const b = order(user, 5);
      const c = order(user, 0, { createdAt: new Date(base + 1) }); // 1 ms after a
      const d = order(user, -30);
      await insertAll([b, d, a, c]);
      expect(ids(await repo.listByUser(user, { limit: 10, offset: 0 }))).toEqual(ids([b, c, a, d]));
    });

    it('listByUser breaks createdAt ties by id, descending', async () => {
      const user = randomUUID();
      const tied = [order(user, 1), order(user, 1), order(user, 1), order(user, 1)];
      const newer = order(user, 2);
      await insertAll([...tied, newer]);
      const expectedTied = ids(tied).sort().reverse();
      expect(ids(await repo.listByUser(user, { limit: 10, offset: 0 }))).toEqual([newer.id, ...expectedTied]);
    });

    it('listByUser honours limit and offset', async () => {
      const user = randomUUID();
      const orders = Array.from({ length: 7 }, (_, i) => order(user, i));
      await insertAll(orders);
      const newestFirst = ids([...orders].reverse());
      expect(ids(await repo.listByUser(user, { limit: 3, offset: 0 }))).toEqual(newestFirst.slice(0, 3));
      expect(ids(await repo.listByUser(user, { limit: 3, offset: 3 }))).toEqual(newestFirst.slice(3, 6));
      expect(ids(await repo.listByUser(user, { limit: 3, offset: 6 }))).toEqual(newestFirst.slice(6));
      expect(await repo.listByUser(user, { limit: 3, offset: 7 })).toEqual([]);
      expect(ids(await repo.listByUser(user, { limit: 100, offset: 1 }))).toEqual(newestFirst.slice(1));
      expect(ids(await repo.listByUser(user, { limit: 1, offset: 0 }))).toEqual(newestFirst.slice(0, 1));
    });

    it("listByUser excludes other users' orders; a user without orders gets an empty array", async () => {
      const alice = randomUUID();
      const bob = randomUUID();
      const mine = [order(alice, 0), order(alice, 2)];
      await insertAll([order(bob, 1), mine[0] as Order, order(bob, 3), mine[1] as Order]);
      const listed = await repo.listByUser(alice, { limit: 100, offset: 0 });
      expect(ids(listed)).toEqual(ids([...mine].reverse()));
      expect(await repo.listByUser(randomUUID(), { limit: 20, offset: 0 })).toEqual([]);
    });
  });
}
