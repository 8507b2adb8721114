import type { Order } from '../domain/order.ts';

/** Cache-aside store for single orders. Any failure is ErrUnavailable; callers degrade to the repository. */
export interface OrderCache {
  get(id: string): Promise<Order | undefined>;
  set(order: Order): Promise<void>;
}
