import { randomUUID } from 'node:crypto';
import { ErrForbidden, ErrNotFound } from '../domain/errors.ts';
import { createOrder, type Order } from '../domain/order.ts';
import type { OrderPlaced } from '../domain/order-placed.ts';
import type { Logger } from '../observability/logger.ts';
import { systemClock, type Clock, type IdGenerator } from '../ports/clock.ts';
import type { OrderCache } from '../ports/order-cache.ts';
import type { OrderEventPublisher } from '../ports/order-events.ts';
import type { OrderRepository, Page } from '../ports/order-repository.ts';
import type { SessionScope } from '../session/session-scope.ts';
import type { Principal } from './authenticate.ts';

/** The caller of a business operation: who (from authentication) and the call's done signal. */
export interface CallContext {
  readonly principal: Principal;
  readonly signal: AbortSignal;
}

export interface OrderServiceDeps {
  readonly repository: OrderRepository;
  readonly cache: OrderCache;
  readonly publisher: OrderEventPublisher;
  readonly sessions: SessionScope;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly newId?: IdGenerator;
}

/**
 * The order use cases. Knows ports only; errors are domain errors (spec 7), mapped by transports.
 * It logs only on its two failure paths, cache write and publish, never on success (spec 6 rule 3).
 */
export class OrderService {
  readonly #deps: OrderServiceDeps;
  readonly #clock: Clock;
  readonly #newId: IdGenerator;

  constructor(deps: OrderServiceDeps) {
    for (const name of ['repository', 'cache', 'publisher', 'sessions', 'logger'] as const) {
      if (deps[name] === undefined) throw new TypeError(`OrderService: missing dependency ${name}`);
    }
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#newId = deps.newId ?? randomUUID;
  }

  /** Store, then cache, then publish. Only the store can fail the request. */
  async create(ctx: CallContext, item: string, quantity: number): Promise<Order> {
    const order = createOrder({ userId: ctx.principal.userId, item, quantity }, this.#newId(), this.#clock.now());
    await this.#deps.repository.insert(order);
    try {
      await this.#deps.cache.set(order);
    } catch (error) {
      this.#deps.logger.warn({ order_id: order.id, err: messageOf(error) }, 'order service: cache write failed');
    }
    try {
      await this.#deps.publisher.publishOrderPlaced(toEvent(order));
    } catch (error) {
      this.#deps.logger.warn({ order_id: order.id, err: messageOf(error) }, 'order service: publish failed');
    }
    return order;
  }

  /**
   * Cache-aside read, owner check here (spec 4.1 rule 5), then a view recorded in the caller's session
   * (rule 4). A cache outage degrades to the database silently: the cache's own health node reports it.
   * Recording the view is best effort: GET /orders/{id} declares no 503, so a full scope does not fail
   * the fetch.
   */
  async get(ctx: CallContext, id: string): Promise<Order> {
    const order = (await this.#fromCache(id)) ?? (await this.#fromRepository(id));
    if (order.userId !== ctx.principal.userId) throw new ErrForbidden();
    this.#recordView(ctx, order.id);
    return order;
  }

  async list(ctx: CallContext, page: Page): Promise<Order[]> {
    return this.#deps.repository.listByUser(ctx.principal.userId, page);
  }

  /** Throws the session errors (no key, scope full, no done signal): transports map them to 503. */
  recent(ctx: CallContext): string[] {
    using lease = this.#deps.sessions.acquire({ sessionKey: ctx.principal.sessionKey, signal: ctx.signal });
    return lease.session.recent();
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
    let lease;
    try {
      lease = this.#deps.sessions.acquire({ sessionKey: ctx.principal.sessionKey, signal: ctx.signal });
    } catch {
      return;
    }
    using _ = lease;
    lease.session.recordView(orderId);
  }
}

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
