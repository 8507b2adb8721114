import type { Order } from '../src/domain/order.ts';
import type { Component } from '../src/lifecycle/component.ts';
import { systemClock, type Clock } from '../src/ports/clock.ts';
import type { OrderCache } from '../src/ports/order-cache.ts';
import { Trouble } from './trouble.ts';

/** Same default as the Redis adapter (adapters/redis/connection.ts), so fake and real expire alike. */
const DEFAULT_TTL_MS = 5 * 60_000;

export interface MemoryOrderCacheOptions {
  /** Drives expiry; tests pass a clock they can move forward. */
  readonly clock?: Clock;
  readonly ttlMs?: number;
}

interface Entry {
  readonly order: Order;
  readonly expiresAt: number;
}

/** In-process OrderCache. Holds copies, so a caller mutating what it passed or got back changes nothing here. */
export class MemoryOrderCache implements OrderCache, Component {
  readonly name = 'cache';
  readonly trouble = new Trouble('cache');
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(options: MemoryOrderCacheOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  }

  /** How long an entry lives (the embedded console's advance-to-TTL button). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Live (unexpired) entries. */
  get size(): number {
    this.#evictExpired();
    return this.#entries.size;
  }

  async get(id: string): Promise<Order | undefined> {
    await this.trouble.check('get');
    return this.peek(id);
  }

  /** The live entry, read past the trouble switch (the embedded control API's recorder). */
  peek(id: string): Order | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(id);
      return undefined;
    }
    return copyOrder(entry.order);
  }

  async set(order: Order): Promise<void> {
    await this.trouble.check('set');
    this.#entries.set(order.id, { order: copyOrder(order), expiresAt: this.#now() + this.#ttlMs });
  }

  async health(): Promise<void> {
    await this.trouble.health();
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  #evictExpired(): void {
    const now = this.#now();
    for (const [id, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(id);
  }
}

function copyOrder(order: Order): Order {
  return { ...order, createdAt: new Date(order.createdAt.getTime()) };
}
