import type { OrderPlaced } from '../../domain/order-placed.ts';

/** The wire form of the event (spec 6 rule 6, our choice): JSON with the snake_case fields. */
export function encodeOrderPlaced(event: OrderPlaced): string {
  return JSON.stringify(event);
}

/** The event in `text`, or undefined when it is no JSON object with every field of its type; other fields are dropped. */
export function decodeOrderPlaced(text: string): OrderPlaced | undefined {
  let value: Partial<OrderPlaced> | null = null;
  try {
    value = JSON.parse(text) as Partial<OrderPlaced> | null;
  } catch {
    // Not JSON: no event.
  }
  // A JSON primitive has none of the fields, as {} has none; only null cannot be destructured.
  const { order_id, user_id, item, quantity, created_at } = value ?? {};
  if (
    typeof order_id !== 'string' ||
    typeof user_id !== 'string' ||
    typeof item !== 'string' ||
    typeof quantity !== 'number' ||
    typeof created_at !== 'string'
  ) {
    return undefined;
  }
  return { order_id, user_id, item, quantity, created_at };
}
