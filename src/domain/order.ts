import { ErrInvalidOrderId, ErrValidation } from './errors.ts';

/** Spec 3.1: the only status the service ever assigns. */
export const ORDER_STATUS_PENDING = 'pending';
export type OrderStatus = typeof ORDER_STATUS_PENDING;

/** The internal order. Wire shapes are separate DTOs (spec 2.1), so fields may be added here freely. */
export interface Order {
  readonly id: string;
  readonly userId: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: OrderStatus;
  readonly createdAt: Date;
}

/**
 * Limits the spec leaves "not shown" (2.4): item is 1..ITEM_MAX_LENGTH characters after trimming, and
 * quantity fits a signed 32-bit integer, because the gRPC contract (int32) and the SQL column
 * (integer) cannot carry more.
 */
export const ITEM_MAX_LENGTH = 200;
export const QUANTITY_MAX = 2_147_483_647;
export const ITEM_UNPAIRED_SURROGATE = 'item must not contain unpaired UTF-16 surrogates';

export interface NewOrderInput {
  readonly userId: string;
  readonly item: string;
  readonly quantity: number;
}

/** Quantity and item rules live here and only here (spec 2.1, 7 rule 2). */
export function validateNewOrder(input: NewOrderInput): void {
  if (input.item.trim() === '') throw new ErrValidation('item is required');
  if ([...input.item].length > ITEM_MAX_LENGTH) {
    throw new ErrValidation(`item must be at most ${ITEM_MAX_LENGTH} characters`);
  }
  // PostgreSQL text cannot hold U+0000: refused here as the caller's mistake, not a 500 from the store.
  if (input.item.includes('\u0000')) throw new ErrValidation('item must not contain NUL characters');
  // JSON can carry a lone UTF-16 surrogate ("\ud800"), which no UTF-8 text holds: PostgreSQL would store
  // U+FFFD and protobuf would send U+FFFD, so one order would read back two ways (rule ORDER-item-limits).
  if (!input.item.isWellFormed()) throw new ErrValidation(ITEM_UNPAIRED_SURROGATE);
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
 * Order identifiers are opaque UUIDs (spec 7 rule 1): the one check, for every transport (the order
 * service calls it), so anything else never reaches a cache or a store. Stored ids are lower-case
 * (randomUUID), so an upper-case spelling of one finds it.
 */
export function parseOrderId(value: string): string {
  if (!isUuid(value)) throw new ErrInvalidOrderId();
  return value.toLowerCase();
}
