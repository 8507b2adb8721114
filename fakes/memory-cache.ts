import type { Order } from '../src/domain/order.ts';
import type { Component } from '../src/lifecycle/component.ts';
import { systemClock, type Clock } from '../src/ports/clock.ts';
import type { OrderCache } from '../src/ports/order-cache.ts';
import { Prng } from './prng.ts';
import { Trouble } from './trouble.ts';

/** Same default as the Redis adapter (adapters/redis/connection.ts), so fake and real expire alike. */
const DEFAULT_TTL_MS = 5 * 60_000;

export interface MemoryOrderCacheOptions {
  /** Drives expiry; tests pass a clock they can move forward. */
  readonly clock?: Clock;
  readonly ttlMs?: number;
  /**
   * Seeded evictions (fakes/README.md): a Redis at its maxmemory drops keys before their TTL, so a get may
   * miss what was just set. Without a seed, an entry lives exactly its TTL.
   */
  readonly seed?: number;
}

/** Seeded: the share of gets that find their entry evicted. */
const EVICTED = 0.1;

interface Entry {
  readonly order: Order;
  readonly expiresAt: number;
}

/**
 * In-process OrderCache with the adapter's SET EX semantics: a set restarts the entry's TTL, a get past it is a
 * miss. Holds copies, so a caller mutating what it passed or got back changes nothing here (as Redis holds JSON).
 */
export class MemoryOrderCache implements OrderCache, Component {
  readonly name = 'cache';
  readonly trouble = new Trouble('cache');
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #prng: Prng | undefined;

  constructor(options: MemoryOrderCacheOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#prng = options.seed === undefined ? undefined : new Prng(options.seed);
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
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    // Redis still serves a key at its expiry millisecond; the fake drops it then, so moving the clock by
    // exactly the TTL (the embedded console's button) expires it. One millisecond apart, on purpose.
    if (entry.expiresAt <= this.#now() || this.#prng?.chance(EVICTED) === true) {
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
