/** The order-placed event (spec 6). Payload fields are our choice (spec 6 rule 6). */
export interface OrderPlaced {
  readonly order_id: string;
  readonly user_id: string;
  readonly item: string;
  readonly quantity: number;
  readonly created_at: string;
}

/** Subject on the broker. */
export const ORDER_PLACED_SUBJECT = 'orders.placed';
