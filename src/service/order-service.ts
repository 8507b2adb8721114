/**
 * The order use cases of spec 4.1 (create, get, list, recent), once for every transport: a transport
 * parses its request, calls these with the caller it authenticated, and maps what they return or throw.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ErrForbidden, ErrIdempotencyKeyReused, ErrNotFound } from '../domain/errors.ts';
import { IDEMPOTENCY_KEY_TTL_MS, parseIdempotencyKey } from '../domain/idempotency-key.ts';
import { createOrder, parseOrderId, type Order } from '../domain/order.ts';
import type { OrderPlaced } from '../domain/order-placed.ts';
import type { Logger } from '../ports/logger.ts';
import { systemClock, type Clock, type IdGenerator } from '../ports/clock.ts';
import type { OrderCache } from '../ports/order-cache.ts';
import type { IdempotencyClaim, OrderRepository, Page } from '../ports/order-repository.ts';
import type { SessionScope } from '../session/scope.ts';
import type { Principal } from './authenticate.ts';

/** The caller of a business operation: who (from authentication) and the call's done signal. */
export interface CallContext {
  readonly principal: Principal;
  readonly signal: AbortSignal;
}

/** Options of a create beyond its body. */
export interface CreateOptions {
  /** The raw Idempotency-Key header (HTTP) or `idempotency-key` metadata (gRPC); parsed here. */
  readonly idempotencyKey?: string | undefined;
}

export interface OrderServiceDeps {
  readonly repository: OrderRepository;
  readonly cache: OrderCache;
  readonly sessions: SessionScope;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly newId?: IdGenerator;
}

/**
 * The order use cases. Knows ports only; errors are domain errors (spec 7), mapped by transports.
 * It logs only on its failure path, the cache write, never on success (spec 6 rule 3); the other
 * failure path, publish, now lives in the outbox relay (rule EVT-7-delivery), which logs `publish failed`.
 */
export class OrderService {
  readonly #deps: OrderServiceDeps;
  readonly #clock: Clock;
  readonly #newId: IdGenerator;

  constructor(deps: OrderServiceDeps) {
    for (const name of ['repository', 'cache', 'sessions', 'logger'] as const) {
      if (deps[name] === undefined) throw new TypeError(`OrderService: missing dependency ${name}`);
    }
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#newId = deps.newId ?? randomUUID;
  }

  /**
   * Order and its order-placed event in one transaction (the outbox: the relay publishes it, the
   * request never waits on the broker), then the cache. Only the store can fail the request.
   * With an idempotency key, a retry of the same body returns the order the key created (nothing
   * new is written); another body with that key is ErrIdempotencyKeyReused.
   */
  async create(ctx: CallContext, item: string, quantity: number, options: CreateOptions = {}): Promise<Order> {
    const now = this.#clock.now();
    const order = createOrder({ userId: ctx.principal.userId, item, quantity }, this.#newId(), now);
    const idempotency: IdempotencyClaim | undefined =
      options.idempotencyKey === undefined
        ? undefined
        : {
            key: parseIdempotencyKey(options.idempotencyKey),
            fingerprint: createFingerprint(item, quantity),
            now,
            expiresAt: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS),
          };
    const result = await this.#deps.repository.place({ order, event: { id: this.#newId(), event: toEvent(order) }, idempotency });
    if (result.outcome === 'key-mismatch') throw new ErrIdempotencyKeyReused();
    if (result.outcome === 'replayed') return result.order;
    try {
      await this.#deps.cache.set(order);
    } catch (error) {
      this.#deps.logger.warn({ order_id: order.id, err: messageOf(error) }, 'order service: cache write failed');
    }
    return order;
  }

  /**
   * Cache-aside read, owner check here (spec 4.1 rule 5), then a view recorded in the caller's session
   * (rule 4). A cache outage degrades to the database silently: the cache's own health node reports it.
   * Recording the view is best effort: GET /orders/{id} declares no 503, so a full scope does not fail
   * the fetch. `rawId` is what the caller sent: it is checked here, once for every transport.
   */
  async get(ctx: CallContext, rawId: string): Promise<Order> {
    const id = parseOrderId(rawId);
    const order = (await this.#fromCache(id)) ?? (await this.#fromRepository(id));
    if (order.userId !== ctx.principal.userId) throw new ErrForbidden();
    this.#recordView(ctx, order.id);
    return order;
  }

  /** The caller's orders, one page: `limit` and `offset` as the transport read them, clamped here (pageOf). */
  async list(ctx: CallContext, limit?: number, offset?: number): Promise<Order[]> {
    return this.#deps.repository.listByUser(ctx.principal.userId, pageOf(limit, offset));
  }

  /** Throws the session errors (no key, scope full, no done signal): transports map them to 503. */
  recent(ctx: CallContext): string[] {
    return this.#deps.sessions.use({ sessionKey: ctx.principal.sessionKey, signal: ctx.signal }, (session) => session.recent());
  }

  async #fromCache(id: string): Promise<Order | undefined> {
    try {
      return await this.#deps.cache.get(id);
    } catch {
      return undefined;
    }
  }

  async #fromRepository(id: string): Promise<Order> {
    const order = await this.#deps.repository.findById(id);
    if (order === undefined) throw new ErrNotFound();
    // Refill the cache; a failure here is not one of the two logged paths and must not fail the read.
    this.#deps.cache.set(order).catch(() => undefined);
    return order;
  }

  #recordView(ctx: CallContext, orderId: string): void {
    try {
      this.#deps.sessions.use({ sessionKey: ctx.principal.sessionKey, signal: ctx.signal }, (session) => session.recordView(orderId));
    } catch {
      // A session that cannot be acquired (scope full) costs the view, not the fetch; recordView itself does not throw.
    }
  }
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

/**
 * Spec 4.1 rule 6, once for every transport: a limit that is absent, not a whole number, <= 0 or > 100
 * is 20; an offset that is absent, not a whole number or negative is 0. Clamps, never errors. A REST
 * query value that does not parse arrives as undefined; gRPC's proto3 0 for an absent field gives 20.
 */
export function pageOf(limit: number | undefined, offset: number | undefined): Page {
  return {
    limit: isWhole(limit) && limit > 0 && limit <= MAX_PAGE_LIMIT ? limit : DEFAULT_PAGE_LIMIT,
    // `> 0`, not `>= 0`: a -0 becomes a plain 0 for the repository.
    offset: isWhole(offset) && offset > 0 ? offset : 0,
  };
}

function isWhole(value: number | undefined): value is number {
  return Number.isSafeInteger(value);
}

/** The event payload (spec 6 rule 6, our choice). */
function toEvent(order: Order): OrderPlaced {
  return {
    order_id: order.id,
    user_id: order.userId,
    item: order.item,
    quantity: order.quantity,
    created_at: order.createdAt.toISOString(),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What must match for a retry to be "the same request": the create's meaning, not its bytes. */
function createFingerprint(item: string, quantity: number): string {
  return createHash('sha256')
    .update(JSON.stringify([item, quantity]))
    .digest('base64url');
}
