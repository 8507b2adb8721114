import type { OrderPlacedHandler } from '../src/ports/order-events.ts';
import type { IdempotencyClaim, PlacementResult } from '../src/ports/order-repository.ts';
import { OrderService, type CallContext } from '../src/service/order-service.ts';
import type { Order } from '../src/domain/order.ts';
import type { Variant } from './replica.ts';

/**
 * Deliberately broken services, for explore.test.ts only: each is a mistake the invariants must catch.
 * They decorate the ports a replica is built from, or subclass the order service; product code has no
 * switch for any of them.
 */

/** The notifier's acknowledgement goes to the broker before the ledger recorded the announcement. */
export const acksBeforeRecording: Variant = {
  name: 'notifier acknowledges before recording',
  wrapPorts: (ports) => ({
    ...ports,
    subscriber: {
      consumeOrderPlaced: (handler, signal) => ports.subscriber.consumeOrderPlaced(ackFirst(handler), signal),
      drainOrderPlaced: (handler, timeoutMs) => ports.subscriber.drainOrderPlaced(ackFirst(handler), timeoutMs),
    },
  }),
};

function ackFirst(handler: OrderPlacedHandler): OrderPlacedHandler {
  return (batch) => {
    void Promise.resolve(handler(batch)).catch(() => undefined);
  };
}

/** The relay marks a batch sent as soon as it is handed to the broker, acknowledged or not. */
export const marksBeforeAck: Variant = {
  name: 'relay marks sent before the broker acknowledges',
  wrapPorts: (ports) => ({
    ...ports,
    outbox: {
      ...ports.outbox,
      relayPending: (limit, send) =>
        ports.outbox.relayPending(limit, async (batch) => {
          void send(batch).catch(() => undefined);
          return batch.map((envelope) => envelope.id);
        }),
    },
  }),
};

interface OutsideClaim {
  readonly fingerprint: string;
  readonly orderId: string;
  readonly expiresAt: Date;
}
const keyTables = new WeakMap<object, Map<string, OutsideClaim>>();

/**
 * The idempotency key is looked up before, and written after, the transaction that places the order:
 * two retries of one key in flight at once both miss and both create.
 */
export const lookupOutsideTransaction: Variant = {
  name: 'idempotency lookup outside the transaction',
  wrapPorts: (ports, run) => {
    let keys = keyTables.get(run);
    if (keys === undefined) keyTables.set(run, (keys = new Map()));
    const table = keys;
    return {
      ...ports,
      repository: {
        // Every other method as the replica gave it (a plain object, so spreading keeps them all).
        ...ports.repository,
        async place(placement): Promise<PlacementResult> {
          const claim: IdempotencyClaim | undefined = placement.idempotency;
          if (claim === undefined) return ports.repository.place(placement);
          const id = `${placement.order.userId}\u0000${claim.key}`;
          const known = table.get(id);
          if (known !== undefined && known.expiresAt > claim.now) {
            if (known.fingerprint !== claim.fingerprint) return { outcome: 'key-mismatch' };
            const original = await ports.repository.findById(known.orderId);
            if (original !== undefined) return { outcome: 'replayed', order: original };
          }
          const result = await ports.repository.place({ ...placement, idempotency: undefined });
          if (result.outcome === 'created')
            table.set(id, { fingerprint: claim.fingerprint, orderId: result.order.id, expiresAt: claim.expiresAt });
          return result;
        },
      },
    };
  },
};

/** A GET holds the caller's session for the whole operation and releases it only when it succeeds. */
export const sessionKeptOnThrow: Variant = {
  name: 'session not released when an operation throws',
  createOrderService: (deps, sessions) =>
    new (class extends OrderService {
      override async get(ctx: CallContext, rawId: string): Promise<Order> {
        // No fallback either: the lease hangs on a signal that never ends.
        const release = sessions.acquire({ sessionKey: ctx.principal.sessionKey, signal: new AbortController().signal });
        const order = await super.get(ctx, rawId);
        release();
        return order;
      }
    })(deps),
};

export const BROKEN_VARIANTS: readonly Variant[] = [acksBeforeRecording, marksBeforeAck, lookupOutsideTransaction, sessionKeptOnThrow];
