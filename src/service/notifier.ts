import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../observability/logger.ts';
import type { OrderEventSubscriber } from '../ports/order-events.ts';

/** Spec 6 rule 2: consumes order-placed events and logs `order placed` with order_id, user_id, item. */
export class Notifier implements Component {
  readonly name = 'notifier';
  readonly #subscriber: OrderEventSubscriber;
  readonly #logger: Logger;

  constructor(subscriber: OrderEventSubscriber, logger: Logger) {
    this.#subscriber = subscriber;
    this.#logger = logger;
  }

  /** Resolves when the signal aborts (spec 6 rule 4). */
  run(signal: AbortSignal): Promise<void> {
    return this.#subscriber.consumeOrderPlaced((event) => {
      this.#logger.info({ order_id: event.order_id, user_id: event.user_id, item: event.item }, 'order placed');
    }, signal);
  }
}
