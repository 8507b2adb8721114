import type { Order } from '../../domain/order.ts';
import { isOrderId, ORDER_STATUS_PENDING } from '../../domain/order.ts';
import type { OrderRepository, Page } from '../../ports/order-repository.ts';
import { translatePgError } from './pg-errors.ts';
import type { Queryable } from './postgres-database.ts';

interface OrderRow {
  id: string;
  user_id: string;
  item: string;
  quantity: number;
  status: string;
  created_at: Date;
}

const COLUMNS = 'id, user_id, item, quantity, status, created_at';

export class PostgresOrderRepository implements OrderRepository {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async insert(order: Order): Promise<void> {
    try {
      await this.#db.query(`INSERT INTO orders (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, [
        order.id,
        order.userId,
        order.item,
        order.quantity,
        order.status,
        order.createdAt,
      ]);
    } catch (error) {
      throw translatePgError(error, 'insert order');
    }
  }

  async findById(id: string): Promise<Order | undefined> {
    // The id column is uuid: anything else cannot exist, and would only earn a 22P02 from the server.
    if (!isOrderId(id)) return undefined;
    try {
      const { rows } = await this.#db.query<OrderRow>(`SELECT ${COLUMNS} FROM orders WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toOrder(rows[0]);
    } catch (error) {
      throw translatePgError(error, 'find order');
    }
  }

  /** Served by orders_user_created_idx (migrations/001_init.sql). */
  async listByUser(userId: string, page: Page): Promise<Order[]> {
    try {
      const { rows } = await this.#db.query<OrderRow>(
        `SELECT ${COLUMNS} FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [userId, page.limit, page.offset],
      );
      return rows.map(toOrder);
    } catch (error) {
      throw translatePgError(error, 'list orders');
    }
  }
}

function toOrder(row: OrderRow): Order {
  if (row.status !== ORDER_STATUS_PENDING) throw new Error(`unexpected order status in database: ${row.status}`);
  return {
    id: row.id,
    userId: row.user_id,
    item: row.item,
    quantity: row.quantity,
    status: ORDER_STATUS_PENDING,
    createdAt: row.created_at,
  };
}
