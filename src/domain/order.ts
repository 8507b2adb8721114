/**
 * The order and its rules, for every transport: validation of a new order (rule ORDER-item-limits, spec 7
 * rule 2) and the order id's form (spec 7 rule 1). Wire shapes are separate DTOs (spec 2.1).
 */
import { ErrInvalidOrderId, ErrValidation } from './errors.ts';

/** Spec 3.1: the only status the service ever assigns (rule ORDER-pending). */
export const ORDER_STATUS_PENDING = 'pending';
export type OrderStatus = typeof ORDER_STATUS_PENDING;

export interface Order {
  readonly id: string;
  readonly userId: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: OrderStatus;
  readonly createdAt: Date;
}

/** Item 1..200 characters after trimming; quantity a signed 32-bit integer, as the gRPC int32 and SQL integer carry. */
export const ITEM_MAX_LENGTH = 200;
export const QUANTITY_MAX = 2_147_483_647;

export interface NewOrderInput {
  readonly userId: string;
  readonly item: string;
  readonly quantity: number;
}

/** Quantity and item rules live here and only here. */
export function validateNewOrder(input: NewOrderInput): void {
  if (input.item.trim() === '') throw new ErrValidation('item is required');
  if ([...input.item].length > ITEM_MAX_LENGTH) {
    throw new ErrValidation(`item must be at most ${ITEM_MAX_LENGTH} characters`);
  }
  // PostgreSQL text cannot hold U+0000: refused here as the caller's mistake, not a 500 from the store.
  if (input.item.includes('\u0000')) throw new ErrValidation('item must not contain NUL characters');
  // JSON can carry a lone UTF-16 surrogate, which no UTF-8 text holds: stored and sent as U+FFFD, one order would read two ways.
  if (!input.item.isWellFormed()) throw new ErrValidation('item must not contain unpaired UTF-16 surrogates');
  if (!Number.isSafeInteger(input.quantity) || input.quantity <= 0) {
    throw new ErrValidation('quantity must be a positive integer');
  }
  if (input.quantity > QUANTITY_MAX) throw new ErrValidation(`quantity must be at most ${QUANTITY_MAX}`);
}

export function createOrder(input: NewOrderInput, id: string, now: Date): Order {
  validateNewOrder(input);
  return {
    id,
    userId: input.userId,
    item: input.item,
    quantity: input.quantity,
    status: ORDER_STATUS_PENDING,
    createdAt: now,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in any case: order ids and event ids (the outbox) are both. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * Order ids are opaque UUIDs (rule ERR-invalid-order-id): the one check, so nothing else reaches a cache or
 * a store. Stored ids are lower-case (randomUUID), so an upper-case spelling of one finds it.
 */
export function parseOrderId(value: string): string {
  if (!isUuid(value)) throw new ErrInvalidOrderId();
  return value.toLowerCase();
}
