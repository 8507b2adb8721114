import type { OrderPlaced } from '../src/domain/order-placed.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { Logger } from '../src/observability/logger.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedHandler } from '../src/ports/order-events.ts';
import { Trouble } from './trouble.ts';

export interface MemoryEventBusOptions {
  /** Where a failing handler is reported; silent when absent. */
  readonly logger?: Logger;
}

interface Consumer {
  readonly queue: OrderPlaced[];
  wake: (() => void) | undefined;
}

/**
 * In-process broker with core NATS semantics: every consumer active at publish time gets the event,
 * nobody gets events published before it subscribed (no replay), and delivery never runs inside
 * publish's call stack.
 */
export class MemoryEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly trouble = new Trouble('publisher');
  /** Everything successfully published, in order, for assertions. */
  readonly published: OrderPlaced[] = [];
  readonly #consumers = new Set<Consumer>();
  readonly #logger: Logger | undefined;

  constructor(options: MemoryEventBusOptions = {}) {
    this.#logger = options.logger;
  }

  get consumerCount(): number {
    return this.#consumers.size;
  }

  async publishOrderPlaced(event: OrderPlaced): Promise<void> {
    await this.trouble.check('publish');
    this.published.push({ ...event });
    for (const consumer of this.#consumers) {
      consumer.queue.push({ ...event });
      consumer.wake?.();
    }
  }

  /** Registers synchronously (before the first await), so a publish right after the call is seen. */
  async consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const consumer: Consumer = { queue: [], wake: undefined };
    this.#consumers.add(consumer);
    const onAbort = (): void => {
      // Stop taking new events at once; what is already queued is still delivered (drain).
      this.#consumers.delete(consumer);
      consumer.wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        for (let event = consumer.queue.shift(); event !== undefined; event = consumer.queue.shift()) {
          await this.#deliver(handler, event);
        }
        if (signal.aborted) return;
        await new Promise<void>((resolve) => {
          consumer.wake = resolve;
        });
        consumer.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#consumers.delete(consumer);
    }
  }

  async health(): Promise<void> {
    await this.trouble.health();
  }

  async #deliver(handler: OrderPlacedHandler, event: OrderPlaced): Promise<void> {
    try {
      await handler(event);
    } catch (err) {
      // A broken handler loses its own event, never the bus (spec 6 rule 7 leaves delivery open).
      this.#logger?.error({ err, order_id: event.order_id }, 'events: handler failed');
    }
  }
}
