import type { Order } from '../../domain/order.ts';

/** A create without an Idempotency-Key: the order and its outbox event, as the statement takes them. */
export interface PlacementRow {
  readonly order: Order;
  readonly eventId: string;
  /** The event as JSON text (the outbox's jsonb payload). */
  readonly payload: string;
}

/** Writes rows in one statement, all or none (PostgreSQL: one statement is one transaction). */
export type WriteRows = (rows: readonly PlacementRow[]) => Promise<void>;

interface Held {
  readonly row: PlacementRow;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Bound on one statement's rows (and its parameter arrays); a fuller turn starts another statement. */
export const COALESCED_ROWS_MAX = 256;

/**
 * Creates without an Idempotency-Key that arrive in one event-loop turn reach PostgreSQL as one
 * statement (target: POST /orders ≥ 50% of a bare INSERT). Each statement costs the server a round
 * trip, a plan execution and a commit whatever its row count: measured with 32 concurrent POSTs, about
 * 20 rows shared each, and the database's CPU per create fell from ~87 to ~30 µs, the service's by ~40 µs.
 * A caller still hears of its create only after the statement that holds it committed.
 *
 * A statement error that one row's content can cause (SQLSTATE class 22, data exception; 23,
 * integrity) must not fail the others: the rows are then written one statement each, so every caller
 * gets its own outcome. Any other error (connection, timeout, shutdown) fails every row of the
 * statement, as it would have failed each of them alone.
 */
export class PlacementCoalescer {
  readonly #write: WriteRows;
  readonly #maxRows: number;
  #held: Held[] = [];

  constructor(write: WriteRows, maxRows: number = COALESCED_ROWS_MAX) {
    if (!(maxRows >= 1)) throw new RangeError('PlacementCoalescer: maxRows must be at least 1');
    this.#write = write;
    this.#maxRows = maxRows;
  }

  place(row: PlacementRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#held.push({ row, resolve, reject });
      // setImmediate runs after this turn's I/O callbacks and their promise jobs: every create parsed
      // in the turn is held by then. A flush for a full statement leaves it nothing (a no-op).
      if (this.#held.length === 1) setImmediate(this.#flush);
      else if (this.#held.length >= this.#maxRows) this.#flush();
    });
  }

  readonly #flush = (): void => {
    const held = this.#held;
    if (held.length === 0) return;
    this.#held = [];
    this.#write(held.map((h) => h.row)).then(
      () => {
        for (const h of held) h.resolve();
      },
      (error: unknown) => {
        if (held.length === 1 || !causedByARow(error)) {
          for (const h of held) h.reject(error);
          return;
        }
        for (const h of held) this.#write([h.row]).then(h.resolve, h.reject);
      },
    );
  };
}

function causedByARow(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
