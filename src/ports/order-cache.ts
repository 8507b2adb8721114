/** Cache-aside store for single orders (rule SVC-cache-aside): any failure is ErrUnavailable, callers degrade to the repository. */
import type { Order } from '../domain/order.ts';

export interface OrderCache {
  get(id: string): Promise<Order | undefined>;
  set(order: Order): Promise<void>;
}
