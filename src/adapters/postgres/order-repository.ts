/**
 * Orders in PostgreSQL (rules SVC-create-durable, IDEM-*): a create is one transaction of its order row, its
 * outbox event and its Idempotency-Key claim, if any (migrations/003_outbox_idempotency.sql).
 */
import { ORDER_STATUS_PENDING, type Order } from '../../domain/order.ts';
import type { OrderRepository, Page, Placement, PlacementResult } from '../../ports/order-repository.ts';
import { translatePgError } from './errors.ts';
import type { Queryable, Transactional } from './database.ts';

interface OrderRow {
  id: string;
  user_id: string;
  item: string;
  quantity: number;
  created_at: Date;
}

export const ORDER_COLUMNS = 'id, user_id, item, quantity, status, created_at';
const INSERT_ORDER = `INSERT INTO orders (${ORDER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`;
const INSERT_EVENT = 'INSERT INTO order_outbox (id, payload, created_at) VALUES ($1, $2, $3)';

/**
 * Claims (user, key) unless a live claim exists; an expired one is taken over. A concurrent first
 * use of the same key blocks on the primary key until the other transaction ends, then sees its row.
 */
const CLAIM_KEY = `INSERT INTO idempotency_keys (user_id, key, fingerprint, order_id, expires_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (user_id, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at
    WHERE idempotency_keys.expires_at <= $6
  RETURNING order_id`;
const CLAIMED_ORDER = `SELECT k.fingerprint, ${selectList('o')}
  FROM idempotency_keys k JOIN orders o ON o.id = k.order_id WHERE k.user_id = $1 AND k.key = $2`;

/** An order's values in ORDER_COLUMNS order. */
export function orderValues(order: Order): unknown[] {
  return [order.id, order.userId, order.item, order.quantity, order.status, order.createdAt];
}

/** The columns of an order row read from table alias `t`. */
function selectList(t: string): string {
  return `${t}.id, ${t}.user_id, ${t}.item, ${t}.quantity, ${t}.status, ${t}.created_at`;
}

/**
 * Spec 4.1 rule 6: limit/offset paging, newest first. Both list queries read orders_user_created_idx
 * (migrations/001_init.sql) in order, so nothing is sorted (test/contracts/list-plan.contract.ts holds both
 * plans to that). Deep pages are a deferred join: the page's keys come from an index-only scan, which skips
 * entries without visiting the table, and only the page's rows are fetched by primary key. The fetch is a
 * LATERAL subquery kept apart by OFFSET 0, so the nested loop holds even in the prepared statement's generic
 * plan, which as a plain join chose a hash join over a sequential scan of the table.
 */
export const LIST_DEEP_SQL = `SELECT ${selectList('o')}
FROM (SELECT id, created_at FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) AS page
CROSS JOIN LATERAL (SELECT * FROM orders WHERE orders.id = page.id OFFSET 0) AS o
ORDER BY page.created_at DESC, page.id DESC`;

/** First pages: one index scan through the table. Cheaper than planning and running the join there. */
export const LIST_SHALLOW_SQL = `SELECT ${selectList('orders')} FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`;

/** Where the join starts to pay: below it, walking the skipped rows costs less than its extra planning (bench/list-query.ts). */
export const DEFERRED_JOIN_MIN_OFFSET = 1_000;

export function listSql(offset: number): string {
  return offset < DEFERRED_JOIN_MIN_OFFSET ? LIST_SHALLOW_SQL : LIST_DEEP_SQL;
}

const FIND_SQL = `SELECT ${selectList('orders')} FROM orders WHERE id = $1`;

export class PostgresOrderRepository implements OrderRepository {
  readonly #db: Transactional;

  constructor(db: Transactional) {
    this.#db = db;
  }

  async insert(order: Order): Promise<void> {
    try {
      await this.#db.query(INSERT_ORDER, orderValues(order));
    } catch (error) {
      throw translatePgError(error, 'insert order');
    }
  }

  async place(placement: Placement): Promise<PlacementResult> {
    const { order, event, idempotency } = placement;
    try {
      return await this.#db.transaction(async (tx): Promise<PlacementResult> => {
        if (idempotency !== undefined) {
          const claimed = await tx.query(CLAIM_KEY, [
            order.userId,
            idempotency.key,
            idempotency.fingerprint,
            order.id,
            idempotency.expiresAt,
            idempotency.now,
          ]);
          if (claimed.rowCount === 0) return replayOf(tx, order.userId, idempotency.key, idempotency.fingerprint);
        }
        await tx.query(INSERT_ORDER, orderValues(order));
        await tx.query(INSERT_EVENT, [event.id, JSON.stringify(event.event), order.createdAt]);
        return { outcome: 'created', order };
      });
    } catch (error) {
      throw translatePgError(error, 'place order');
    }
  }

  async findById(id: string): Promise<Order | undefined> {
    try {
      const { rows } = await this.#db.query<OrderRow>({ name: 'orders_find', text: FIND_SQL, values: [id] });
      return rows[0] === undefined ? undefined : toOrder(rows[0]);
    } catch (error) {
      throw translatePgError(error, 'find order');
    }
  }

  async listByUser(userId: string, page: Page): Promise<Order[]> {
    try {
      const text = listSql(page.offset);
      const name = text === LIST_DEEP_SQL ? 'orders_list_deep' : 'orders_list_shallow';
      const { rows } = await this.#db.query<OrderRow>({ name, text, values: [userId, page.limit, page.offset] });
      return rows.map(toOrder);
    } catch (error) {
      throw translatePgError(error, 'list orders');
    }
  }
}

async function replayOf(tx: Queryable, userId: string, key: string, fingerprint: string): Promise<PlacementResult> {
  const { rows } = await tx.query<OrderRow & { fingerprint: string }>(CLAIMED_ORDER, [userId, key]);
  const row = rows[0];
  if (row === undefined) throw new Error('idempotency key claimed but its order is missing');
  if (row.fingerprint !== fingerprint) return { outcome: 'key-mismatch' };
  return { outcome: 'replayed', order: toOrder(row) };
}

/** status is always pending: the table's CHECK (migrations/001_init.sql) holds no other. */
function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    userId: row.user_id,
    item: row.item,
    quantity: row.quantity,
    status: ORDER_STATUS_PENDING,
    createdAt: row.created_at,
  };
}
