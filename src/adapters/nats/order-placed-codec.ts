import type { OrderPlaced } from '../../domain/order-placed.ts';

/** The wire form of the event (spec 6 rule 6, our choice): JSON with the snake_case fields. */
export function encodeOrderPlaced(event: OrderPlaced): string {
  return JSON.stringify(event);
}

export function decodeOrderPlaced(text: string): OrderPlaced | undefined {
  let value: Partial<OrderPlaced> | null;
  try {
    value = JSON.parse(text) as Partial<OrderPlaced> | null;
  } catch {
    return undefined;
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof value.order_id !== 'string' ||
    typeof value.user_id !== 'string' ||
    typeof value.item !== 'string' ||
    typeof value.quantity !== 'number' ||
    typeof value.created_at !== 'string'
  ) {
    return undefined;
  }
  return { order_id: value.order_id, user_id: value.user_id, item: value.item, quantity: value.quantity, created_at: value.created_at };
}
