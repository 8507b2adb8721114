import type { Order } from '../domain/order.ts';

export interface Page {
  /** Already clamped by the caller: 1..100. */
  readonly limit: number;
  /** Already clamped by the caller: >= 0. */
  readonly offset: number;
}

/**
 * Durable order storage. Implementations translate driver failures into ErrUnavailable and unique
 * violations into ErrConflict at their boundary.
 */
export interface OrderRepository {
  insert(order: Order): Promise<void>;
  findById(id: string): Promise<Order | undefined>;
  /** The user's orders, newest first (created_at desc, then id desc): our choice for spec 4.1 rule 7. */
  listByUser(userId: string, page: Page): Promise<Order[]>;
}
