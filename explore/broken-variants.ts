import { createHash } from 'node:crypto';
import type { SessionKey } from '../src/domain/session-key.ts';
import type { OrderPlacedHandler } from '../src/ports/order-events.ts';
import type { Timers } from '../src/ports/timers.ts';
import { OutboxRelay } from '../src/service/outbox-relay.ts';
import { TokenService } from '../src/service/token-service.ts';
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

// ---------------------------------------------------------------- one per class the scripted tests missed

/** Batch: the notifier announces the first event of a batch and acknowledges them all (wrong only for a batch of 2 or more). */
export const announcesFirstOfBatch: Variant = {
  name: 'notifier announces only the first event of a batch',
  wrapPorts: (ports) => {
    const firstOnly =
      (handler: OrderPlacedHandler): OrderPlacedHandler =>
      (batch) =>
        handler(batch.slice(0, 1));
    return {
      ...ports,
      subscriber: {
        consumeOrderPlaced: (handler, signal) => ports.subscriber.consumeOrderPlaced(firstOnly(handler), signal),
        drainOrderPlaced: (handler, timeoutMs) => ports.subscriber.drainOrderPlaced(firstOnly(handler), timeoutMs),
      },
    };
  },
};

/** Key reuse: the key's fingerprint covers the item only, so the same key with another quantity replays instead of 422. */
export const fingerprintWithoutQuantity: Variant = {
  name: 'idempotency fingerprint ignores the quantity',
  wrapPorts: (ports) => ({
    ...ports,
    repository: {
      ...ports.repository,
      place: (placement) =>
        ports.repository.place(
          placement.idempotency === undefined
            ? placement
            : {
                ...placement,
                idempotency: {
                  ...placement.idempotency,
                  fingerprint: createHash('sha256').update(placement.order.item).digest('base64url'),
                },
              },
        ),
    },
  }),
};

/** Cancellation: the login gate is not handed the caller's signal, so a caller that went away keeps its place in the queue. */
export const gateIgnoresAbort: Variant = {
  name: 'login gate keeps the waits of callers that went away',
  gateSignal: () => undefined,
};

/** Relay loop: run() returns after the first failed round (the sampler and purger go on), so nothing is relayed until a restart. */
export const relayLoopStopsOnFailure: Variant = {
  name: 'relay loop stops after a failed round',
  createRelay: (outbox, publisher, logger, options) =>
    new (class extends OutboxRelay {
      override async run(signal: AbortSignal): Promise<void> {
        const timers = options.timers as Timers;
        // The loop of OutboxRelay.run with `return` where it should back off.
        while (!signal.aborted) {
          const round = await this.relayOnce();
          if (round === 'failed') return;
          if (round === 'partial') await timers.sleep(50, signal);
        }
      }
    })(outbox, publisher, logger, options),
};

/** Window: taking a lingering session again does not stop its linger timer, so it closes 5 minutes after the first release, in use or not. */
export const lingerTimerNotCleared: Variant = {
  name: 'linger timer not cleared when a session is taken again',
  sessionTimers: (timers) => ({
    setTimeout: (callback, ms) => timers.setTimeout(callback, ms),
    clearTimeout: () => undefined,
    sleep: (ms, signal) => timers.sleep(ms, signal),
    nowMs: () => timers.nowMs(),
  }),
};

/** Boundary: tokens are still accepted during the second after they expire (a verification clock one second behind). */
export const tokenAcceptedAtExpiry: Variant = {
  name: 'token accepted up to a second past its expiry',
  createTokens: (secret, lifetimeMs, now) => {
    const issuer = new TokenService(secret, lifetimeMs, now);
    const lenient = new TokenService(secret, lifetimeMs, () => now() - 1_000);
    return Object.assign(Object.create(TokenService.prototype) as TokenService, {
      issue: (userId: string, username: string) => issuer.issue(userId, username),
      verify: (token: string) => lenient.verify(token),
    });
  },
};

/** Clamp: a limit above the maximum is clamped to 100 instead of falling back to the default 20. */
export const limitClampedToMaximum: Variant = {
  name: 'list limit above 100 clamped to 100',
  createOrderService: (deps) =>
    new (class extends OrderService {
      override list(ctx: CallContext, limit?: number, offset?: number): Promise<Order[]> {
        return super.list(ctx, limit !== undefined && limit > 100 ? 100 : limit, offset);
      }
    })(deps),
};

/** Retention: sessions are keyed by the token (its iat) instead of the user, so a new login starts an empty session. */
export const sessionPerToken: Variant = {
  name: 'session keyed by token instead of user',
  createOrderService: (deps) =>
    new (class extends OrderService {
      override get(ctx: CallContext, rawId: string): Promise<Order> {
        return super.get(perToken(ctx), rawId);
      }
      override recent(ctx: CallContext): string[] {
        return super.recent(perToken(ctx));
      }
    })(deps),
};

function perToken(ctx: CallContext): CallContext {
  const { principal } = ctx;
  return { ...ctx, principal: { ...principal, sessionKey: `${principal.sessionKey}@${principal.claims.iat}` as SessionKey } };
}

/** The eight of this class list, in the order explore/README.md gives them. */
export const CLASS_VARIANTS: readonly Variant[] = [
  announcesFirstOfBatch,
  fingerprintWithoutQuantity,
  gateIgnoresAbort,
  relayLoopStopsOnFailure,
  lingerTimerNotCleared,
  tokenAcceptedAtExpiry,
  limitClampedToMaximum,
  sessionPerToken,
];
