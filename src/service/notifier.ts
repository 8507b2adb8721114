/**
 * The notifier (spec 6 rule 2): consumes order-placed events and logs `order placed` with order_id, user_id and
 * item. Every replica consumes through the one shared durable consumer, and the ledger records each announced
 * event, so a redelivered event (lost ack, broker restart) is not announced again; the broker's
 * acknowledgement follows the line (rule EVT-7-delivery).
 */
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../ports/logger.ts';
import type { OrderEventSubscriber, OrderPlacedEnvelope } from '../ports/order-events.ts';
import type { NotificationLedger } from '../ports/outbox.ts';

/** Bound on the stop-time drain (rule EVT-4-notifier-stop: after the relay's flush). */
export const NOTIFIER_DRAIN_MS = 3_000;

export class Notifier implements Component {
  readonly name = 'notifier';
  readonly #subscriber: OrderEventSubscriber;
  readonly #ledger: NotificationLedger;
  readonly #logger: Logger;
  readonly #drainMs: number;

  constructor(subscriber: OrderEventSubscriber, ledger: NotificationLedger, logger: Logger, options: { drainMs?: number } = {}) {
    this.#subscriber = subscriber;
    this.#ledger = ledger;
    this.#logger = logger;
    this.#drainMs = options.drainMs ?? NOTIFIER_DRAIN_MS;
  }

  /** Resolves when the signal aborts (spec 6 rule 4), after the events already in hand. */
  run(signal: AbortSignal): Promise<void> {
    return this.#subscriber.consumeOrderPlaced((batch) => this.#announce(batch), signal);
  }

  /** Runs after the relay's stop-time flush: what it just published is announced by this process. */
  stop(): Promise<void> {
    return this.#subscriber.drainOrderPlaced((batch) => this.#announce(batch), this.#drainMs);
  }

  #announce(batch: readonly OrderPlacedEnvelope[]): Promise<void> {
    return this.#ledger.announceOnce(
      batch.map((envelope) => envelope.id),
      (fresh) => {
        const unannounced = new Set(fresh);
        for (const { id, event } of batch) {
          if (!unannounced.delete(id)) continue;
          this.#logger.info({ order_id: event.order_id, user_id: event.user_id, item: event.item }, 'order placed');
        }
      },
    );
  }
}
