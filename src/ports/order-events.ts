import type { OrderPlaced } from '../domain/order-placed.ts';

export interface OrderEventPublisher {
  publishOrderPlaced(event: OrderPlaced): Promise<void>;
}

export type OrderPlacedHandler = (event: OrderPlaced) => void | Promise<void>;

export interface OrderEventSubscriber {
  /**
   * Delivers order-placed events to the handler until the signal aborts, then drains and resolves.
   * Resolves (never rejects) on abort: spec 6 rule 4.
   */
  consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void>;
}
