/**
 * Planted divergences: fakes that part from the real backends on purpose, so a test can see the differential
 * check report them (differential.test.ts, differential.real.test.ts).
 */
import { MemoryStore } from '../../fakes/memory-store.ts';
import type { Order } from '../../src/domain/order.ts';
import type { Page } from '../../src/ports/order-repository.ts';

/** Orders a tie (same created_at) by id ascending, where PostgreSQL's ORDER BY created_at DESC, id DESC gives descending. */
export class TieFlippedStore extends MemoryStore {
  override async listByUser(userId: string, page: Page): Promise<Order[]> {
    const rows = await super.listByUser(userId, page);
    return rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}
