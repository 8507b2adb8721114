/** The order-placed event (spec 6): its payload fields are our choice (rule EVT-6-subject-payload). */
export interface OrderPlaced {
  readonly order_id: string;
  readonly user_id: string;
  readonly item: string;
  readonly quantity: number;
  readonly created_at: string;
}

/** Subject on the broker. */
export const ORDER_PLACED_SUBJECT = 'orders.placed';
