import type { Order } from '../domain/order.ts';
import { systemClock, type Clock } from '../ports/clock.ts';
import type { OrderCache } from '../ports/order-cache.ts';

/** Our choices (spec/rules.yaml SVC-near-cache). */
export const NEAR_CACHE_DEFAULTS = {
  /** Entries held; the oldest goes first. An entry is a few hundred bytes: ~3 MB at the bound. */
  maxEntries: 10_000,
  /** Well under the shared cache's five minutes (SVC-cache-ttl), so an entry never outlives its source for long. */
  ttlMs: 30_000,
} as const;

export interface NearOrderCacheOptions {
  readonly maxEntries?: number;
  readonly ttlMs?: number;
  readonly clock?: Clock;
}

/**
 * A bounded in-process tier in front of the shared cache (issue 16: the Redis round trip was the
 * largest cost of a GET cache hit). Cache-aside is kept: a near miss reads the shared cache, and a
 * hit there fills the near tier; every write goes to the shared cache first and is remembered here
 * only once it succeeded, so the shared cache is still filled for the other replicas. Orders are
 * immutable (spec 3.1), so an entry never needs invalidating; it lapses after ttlMs.
 */
export class NearOrderCache implements OrderCache {
  readonly #inner: OrderCache;
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #clock: Clock;
  /** Insertion order is eviction order (first in, first out). */
  readonly #entries = new Map<string, { readonly order: Order; readonly expiresAtMs: number }>();

  constructor(inner: OrderCache, options: NearOrderCacheOptions = {}) {
    if (inner === undefined) throw new TypeError('NearOrderCache: missing the shared cache');
    this.#inner = inner;
    this.#maxEntries = options.maxEntries ?? NEAR_CACHE_DEFAULTS.maxEntries;
    this.#ttlMs = options.ttlMs ?? NEAR_CACHE_DEFAULTS.ttlMs;
    this.#clock = options.clock ?? systemClock;
    if (!(this.#maxEntries >= 1)) throw new RangeError('NearOrderCache: maxEntries must be at least 1');
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Not async: a near hit resolves without another promise hop. */
  get(id: string): Promise<Order | undefined> {
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      if (entry.expiresAtMs > this.#clock.now().getTime()) return Promise.resolve(entry.order);
      this.#entries.delete(id);
    }
    return this.#inner.get(id).then((order) => {
      if (order !== undefined) this.#remember(order);
      return order;
    });
  }

  async set(order: Order): Promise<void> {
    await this.#inner.set(order);
    this.#remember(order);
  }

  #remember(order: Order): void {
    this.#entries.delete(order.id);
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(order.id, { order, expiresAtMs: this.#clock.now().getTime() + this.#ttlMs });
  }
}
