/**
 * The outbox table (migrations/003_outbox_idempotency.sql, rule EVT-7-delivery) for the relay and, its rows
 * being deleted as they are announced, the notifier's ledger; also the purge of expired idempotency keys.
 */
import type { OrderPlaced } from '../../domain/order-placed.ts';
import { isUuid } from '../../domain/order.ts';
import type { NotificationLedger, OutboxBacklog, OutboxStore, SendBatch } from '../../ports/outbox.ts';
import { translatePgError } from './errors.ts';
import type { Transactional } from './database.ts';

/** Deletes in bounded chunks so housekeeping never holds a long lock or a long statement. */
const PURGE_CHUNK = 5_000;

export class PostgresOutbox implements OutboxStore, NotificationLedger {
  readonly #db: Transactional;

  constructor(db: Transactional) {
    this.#db = db;
  }

  /** FOR UPDATE SKIP LOCKED: each replica claims rows no other holds, until its sent_at update commits. */
  async relayPending(limit: number, send: SendBatch): Promise<{ claimed: number; sent: number }> {
    try {
      return await this.#db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string; payload: OrderPlaced }>(
          'SELECT id, payload FROM order_outbox WHERE sent_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED',
          [limit],
        );
        if (rows.length === 0) return { claimed: 0, sent: 0 };
        const acked = await send(rows.map((row) => ({ id: row.id, event: row.payload })));
        if (acked.length > 0) await tx.query('UPDATE order_outbox SET sent_at = now() WHERE id = ANY($1::uuid[])', [acked]);
        return { claimed: rows.length, sent: acked.length };
      });
    } catch (error) {
      throw translatePgError(error, 'relay outbox');
    }
  }

  async backlog(): Promise<OutboxBacklog> {
    try {
      const { rows } = await this.#db.query<{ pending: number; oldest: Date | null }>(
        'SELECT count(*)::int AS pending, min(created_at) AS oldest FROM order_outbox WHERE sent_at IS NULL',
      );
      const row = rows[0];
      return { pending: row?.pending ?? 0, oldestCreatedAt: row?.oldest ?? undefined };
    } catch (error) {
      throw translatePgError(error, 'outbox backlog');
    }
  }

  /** Expired idempotency keys (an announced event's outbox row is already gone: announceOnce). */
  async purge(now: Date): Promise<number> {
    try {
      const keys = await this.#db.query(
        `DELETE FROM idempotency_keys WHERE (user_id, key) IN (
           SELECT user_id, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT ${PURGE_CHUNK})`,
        [now],
      );
      return keys.rowCount ?? 0;
    } catch (error) {
      throw translatePgError(error, 'purge idempotency keys');
    }
  }

  /**
   * A row that is gone has been announced (migrations/004_outbox_delete_on_announce.sql). The DELETE takes the
   * rows' locks, so a second replica announcing the same id (or a relay still holding it) is waited for.
   * `announce` runs before COMMIT: a failed commit leaves the rows, announced again on redelivery.
   */
  async announceOnce(ids: readonly string[], announce: (fresh: ReadonlySet<string>) => void): Promise<void> {
    // Ids are outbox row ids (uuid); anything else was never written by a relay and is never announced.
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return;
    try {
      await this.#db.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>('DELETE FROM order_outbox WHERE id = ANY($1::uuid[]) RETURNING id', [valid]);
        announce(new Set(rows.map((row) => row.id)));
      });
    } catch (error) {
      throw translatePgError(error, 'record notification');
    }
  }
}
