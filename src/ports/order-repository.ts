/**
 * Durable order storage (spec 3.1): each order written with its event (the transactional outbox, rule
 * EVT-7-delivery) and its Idempotency-Key claim (rules IDEM-*). Implementations translate driver failures
 * into ErrUnavailable and unique violations into ErrConflict at their boundary.
 */
import type { Order } from '../domain/order.ts';
import type { OrderPlacedEnvelope } from './order-events.ts';

/** Already clamped by the caller: limit 1..100, offset >= 0. */
export interface Page {
  readonly limit: number;
  readonly offset: number;
}

/** An Idempotency-Key claim (draft-ietf-httpapi-idempotency-key-header), scoped to the order's user. */
export interface IdempotencyClaim {
  readonly key: string;
  /** Digest of the request's meaning (item, quantity): a retry must carry the same. */
  readonly fingerprint: string;
  /** A key claimed at `now` lives until `expiresAt`; an expired key may be claimed anew. */
  readonly now: Date;
  readonly expiresAt: Date;
}

/** A new order, its order-placed event, and optionally the idempotency key it answers. */
export interface Placement {
  readonly order: Order;
  readonly event: OrderPlacedEnvelope;
  readonly idempotency?: IdempotencyClaim | undefined;
}

export type PlacementResult =
  /** Order, event and key written in one transaction. */
  | { readonly outcome: 'created'; readonly order: Order }
  /** The key was already claimed with the same fingerprint: the order it created, nothing written. */
  | { readonly outcome: 'replayed'; readonly order: Order }
  /** The key was already claimed with another fingerprint: nothing written. */
  | { readonly outcome: 'key-mismatch' };

export interface OrderRepository {
  /** The order alone (seeding, tests); creates go through place so no order is without its event. */
  insert(order: Order): Promise<void>;
  /**
   * The order, its event and its key, together or not at all. Two placements with the same key at once: one
   * creates, the other waits for it and replays (or mismatches).
   */
  place(placement: Placement): Promise<PlacementResult>;
  findById(id: string): Promise<Order | undefined>;
  /** The user's orders, newest first (created_at desc, then id desc): our choice for spec 4.1 rule 7. */
  listByUser(userId: string, page: Page): Promise<Order[]>;
}
