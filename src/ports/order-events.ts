/**
 * The broker's side of order-placed events (spec 6, rule EVT-7-delivery): publishing what the outbox relay
 * sends, and consuming it for the notifier.
 */
import type { OrderPlaced } from '../domain/order-placed.ts';

/** An order-placed event with its identity: the outbox row id, sent to the broker as Nats-Msg-Id. */
export interface OrderPlacedEnvelope {
  readonly id: string;
  readonly event: OrderPlaced;
}

export interface OrderEventPublisher {
  /**
   * Resolves when the broker acknowledged the event (stored, or dropped as a duplicate of the same id);
   * rejects with ErrUnavailable otherwise. Publishing the same id twice within the broker's duplicate
   * window stores it once.
   */
  publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void>;
}

/**
 * Handles a batch of delivered events. Resolving acknowledges every event of the batch; rejecting
 * leaves them unacknowledged, so the broker delivers them again (to this or another replica).
 */
export type OrderPlacedHandler = (batch: readonly OrderPlacedEnvelope[]) => void | Promise<void>;

export interface OrderEventSubscriber {
  /**
   * Delivers order-placed events to the handler through the one consumer shared by every replica
   * (each event goes to one of them) until the signal aborts; then finishes the batch in hand and
   * resolves (never rejects on abort: spec 6 rule 4). Events published while nobody consumed are
   * delivered later (durable).
   */
  consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void>;
  /**
   * The stop-time drain (rule EVT-4-notifier-stop): delivers what is pending now, resolves once nothing is
   * left or after about `timeoutMs`; what remains stays with the broker for the next process. Never rejects.
   */
  drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void>;
}
