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
  /** Resolves once the broker stored the event (a duplicate of the same id is stored once), else ErrUnavailable. */
  publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void>;
}

/** Handles a batch of delivered events: resolving acknowledges them all, rejecting has the broker deliver them again. */
export type OrderPlacedHandler = (batch: readonly OrderPlacedEnvelope[]) => void | Promise<void>;

export interface OrderEventSubscriber {
  /**
   * Delivers events through the one consumer shared by every replica (each event to one of them, durable)
   * until the signal aborts; then finishes the batch in hand and resolves (never rejects on abort: spec 6 rule 4).
   */
  consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void>;
  /** The stop-time drain (rule EVT-4-notifier-stop): what is pending now, for about `timeoutMs` at most; never rejects. */
  drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void>;
}
