import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../fakes/memory-store.ts';
import type { Order } from '../../src/domain/order.ts';
import { credentialStoreContract } from './credential-store.contract.ts';
import { orderRepositoryContract } from './order-repository.contract.ts';
import { outboxContract } from './outbox.contract.ts';

orderRepositoryContract('memory', () => new MemoryStore());
outboxContract('memory', () => {
  const store = new MemoryStore();
  return { repository: store, outbox: store };
});
credentialStoreContract('memory', () => new MemoryStore());

function order(userId: string, createdAtMs: number, id: string = randomUUID()): Order {
  return { id, userId, item: 'widget', quantity: 1, status: 'pending', createdAt: new Date(createdAtMs) };
}

// Trouble (down, up, failNext) is driven through the service by conformance (healthz-database-down,
// simulator-component-settings-and-log) and src/service tests (order-service, auth-service, create-app).
describe('MemoryStore listByUser', () => {
  it('pages a 10,000-order user at offset 9,000 without scanning other users', async () => {
    const store = new MemoryStore();
    const heavy = randomUUID();
    // Other users' orders must not make the heavy user's page slower.
    for (let u = 0; u < 50; u++) {
      const other = randomUUID();
      for (let i = 0; i < 1_000; i++) await store.insert(order(other, i));
    }
    for (let i = 0; i < 10_000; i++) await store.insert(order(heavy, i * 1_000));
    let page: Order[] = [];
    for (let i = 0; i < 1_000; i++) page = await store.listByUser(heavy, { limit: 100, offset: 9_000 });
    expect(page.map((o) => o.createdAt.getTime())).toEqual(Array.from({ length: 100 }, (_, i) => (999 - i) * 1_000));
  });

  it('matches a sort-everything model for random inserts and pages', async () => {
    const users = ['u1', 'u2', 'u3'];
    const arbOrder = fc.record({
      userId: fc.constantFrom(...users),
      // Few distinct instants, so ties (broken by id) are common.
      createdAtMs: fc.integer({ min: 0, max: 5 }),
      id: fc.uuid(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(arbOrder, { selector: (o) => o.id, maxLength: 40 }),
        fc.constantFrom(...users),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 45 }),
        async (specs, userId, limit, offset) => {
          const store = new MemoryStore();
          const orders = specs.map((s) => order(s.userId, s.createdAtMs, s.id));
          for (const o of orders) await store.insert(o);
          const model = orders
            .filter((o) => o.userId === userId)
            .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
            .slice(offset, offset + limit)
            .map((o) => o.id);
          expect((await store.listByUser(userId, { limit, offset })).map((o) => o.id)).toEqual(model);
        },
      ),
      { numRuns: 300 },
    );
  });
});
