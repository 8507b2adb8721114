/**
 * The wire shapes of spec 2.1 and their decoding, apart from the domain types. Decoding only: the rules
 * stay in the domain (spec 7 rule 2), the paging clamps in the service (spec 4.1 rule 6).
 */
import type { Order } from '../../../domain/order.ts';
import { ErrMalformedBody } from '../../errors/table.ts';

export interface OrderDto {
  readonly id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

export function toOrderDto(order: Order): OrderDto {
  return {
    id: order.id,
    item: order.item,
    quantity: order.quantity,
    status: order.status,
    created_at: order.createdAt.toISOString(),
  };
}

export interface LoginRequestDto {
  readonly username: string;
  readonly password: string;
}

export interface CreateOrderRequestDto {
  readonly item: string;
  readonly quantity: number;
}

/**
 * A JSON object whose known fields have the right type; an absent one decodes to its zero value ('' or 0),
 * so "quantity must be positive" stays in the domain. Anything else is 400 `malformed request body`.
 */
function decodeObject(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: refused below like any other non-object.
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ErrMalformedBody();
  return value as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ErrMalformedBody();
  return value;
}

function integerField(body: Record<string, unknown>, name: string): number {
  const value = body[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ErrMalformedBody();
  return value;
}

export function decodeLoginRequest(raw: string): LoginRequestDto {
  const body = decodeObject(raw);
  return { username: stringField(body, 'username'), password: stringField(body, 'password') };
}

export function decodeCreateOrderRequest(raw: string): CreateOrderRequestDto {
  const body = decodeObject(raw);
  return { item: stringField(body, 'item'), quantity: integerField(body, 'quantity') };
}

/** For the service's page clamps (spec 4.1 rule 6): a whole decimal number (blanks around ignored), or undefined. */
export function queryInteger(text: string | null | undefined): number | undefined {
  if (text == null || !/^[+-]?\d+$/.test(text.trim())) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
