/**
 * What the explorer expects an answer to hold, computed from its own reading of the spec
 * (explore/spec-constants.ts) and the orders the database committed, never from product functions:
 * the wire shape of an order (spec 2.1), the list's clamps and page (spec 4.1 rule 6, spec 8), and the
 * order of a page (newest first: our choice, rule EXPLORE-list).
 */
import type { Order } from '../src/domain/order.ts';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from './spec-constants.ts';

/** An order on the wire (spec 2.1 "Order"). */
export interface OrderDto {
  readonly id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

/** The wire form of a committed order: its status is `pending`, the only one there is (spec 3.1). */
export function orderDto(order: Order): OrderDto {
  return { id: order.id, item: order.item, quantity: order.quantity, status: 'pending', created_at: order.createdAt.toISOString() };
}

export function sameDto(a: OrderDto, b: OrderDto): boolean {
  return a.id === b.id && a.item === b.item && a.quantity === b.quantity && a.status === b.status && a.created_at === b.created_at;
}

export function newerFirst(a: OrderDto, b: OrderDto): boolean {
  return a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);
}

/** A query value as an integer, or undefined when it is missing or not a whole number ("unparsable"). */
function integer(text: string | null): number | undefined {
  if (text === null || !/^\s*[+-]?\d+\s*$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Spec 4.1 rule 6: limit missing, unparsable, <= 0 or > 100 gives 20; offset missing, unparsable or negative gives 0. */
export function clampedPage(limit: string | null, offset: string | null): { limit: number; offset: number } {
  const l = integer(limit);
  const o = integer(offset);
  return {
    limit: l !== undefined && l > 0 && l <= PAGE_LIMIT_MAX ? l : PAGE_LIMIT_DEFAULT,
    offset: o !== undefined && o > 0 ? o : 0,
  };
}

/** The page GET /orders?limit&offset must answer: exactly this slice of the caller's orders, newest first. */
export function expectedPage(orders: readonly Order[], limit: string | null, offset: string | null): OrderDto[] {
  const page = clampedPage(limit, offset);
  const sorted = orders.map(orderDto).sort((a, b) => (newerFirst(a, b) ? -1 : 1));
  return sorted.slice(page.offset, page.offset + page.limit);
}
