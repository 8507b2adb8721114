/**
 * The transactional outbox read back (rule EVT-7-delivery): the relay's pending events and backlog, and the
 * notifier's ledger of what was already announced, both shared by every replica.
 */
import type { OrderPlacedEnvelope } from './order-events.ts';

/** How far the relay is behind: pending (unsent) events and the age of the oldest one. */
export interface OutboxBacklog {
  readonly pending: number;
  /** Creation time of the oldest unsent event; undefined when nothing is pending. */
  readonly oldestCreatedAt: Date | undefined;
}

/** Sends a claimed batch; resolves with the ids the broker acknowledged, the rest (or all, on a rejection) stay pending. */
export type SendBatch = (batch: readonly OrderPlacedEnvelope[]) => Promise<readonly string[]>;

/** Events written with their orders (OrderRepository.place); a claimed batch is invisible to other relays until settled. */
export interface OutboxStore {
  /** Claims up to `limit` pending events, oldest first, skipping those another relay holds; sends them; marks the acknowledged sent. */
  relayPending(limit: number, send: SendBatch): Promise<{ readonly claimed: number; readonly sent: number }>;
  backlog(): Promise<OutboxBacklog>;
  /** Housekeeping: deletes idempotency keys expired at `now`; returns how many. */
  purge(now: Date): Promise<number>;
}

/** Which events the notifier announced: one `order placed` line per order across the fleet. */
export interface NotificationLedger {
  /**
   * Calls `announce` with the ids not yet recorded and records them, atomically (a replica announcing the same
   * id at once waits, then finds it recorded); the relay never claims a recorded event again. If recording
   * fails after `announce` ran, it rejects and the ids stay unrecorded: at least once.
   */
  announceOnce(ids: readonly string[], announce: (fresh: ReadonlySet<string>) => void): Promise<void>;
}
