import { ErrConflict, ErrUnavailable } from '../src/domain/errors.ts';
import type { Order } from '../src/domain/order.ts';
import type { User } from '../src/domain/user.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { CredentialStore } from '../src/ports/credential-store.ts';
import type { OrderPlacedEnvelope } from '../src/ports/order-events.ts';
import type { OrderRepository, Page, Placement, PlacementResult } from '../src/ports/order-repository.ts';
import type { NotificationLedger, OutboxBacklog, OutboxStore, SendBatch } from '../src/ports/outbox.ts';
import { Prng } from './prng.ts';
import { Trouble } from './trouble.ts';

export interface MemoryStoreOptions {
  /**
   * Seeded interleaving (fakes/README.md): each operation takes effect after a drawn number of turns, so
   * calls made at once finish in a seeded order, as concurrent transactions on PostgreSQL commit in any order.
   * Without a seed, calls take effect in the order they were made.
   */
  readonly seed?: number;
}

/** Seeded: an operation waits up to this many microtask turns before it takes effect. */
const MAX_TURNS = 4;

interface OutboxRow {
  readonly envelope: OrderPlacedEnvelope;
  readonly createdAt: Date;
  sentAt: Date | undefined;
  /** Held by a relay round (the fake's FOR UPDATE SKIP LOCKED). */
  claimed: boolean;
}

interface KeyClaim {
  readonly fingerprint: string;
  readonly orderId: string;
  readonly expiresAt: Date;
}

/**
 * In-memory OrderRepository + CredentialStore + outbox + notification ledger, held to the same
 * contract tests as the Postgres adapters (test/contracts). Every operation consults `trouble`
 * first so a test can drive an outage; a placement is atomic because nothing awaits between its
 * check and its writes (a transaction that commits at one instant). A unique violation is ErrConflict with
 * the words the adapter's translation gives it (adapters/postgres/errors.ts), naming the same constraint.
 */
export class MemoryStore implements OrderRepository, CredentialStore, OutboxStore, NotificationLedger, Component {
  readonly name = 'database';
  readonly trouble = new Trouble('database');

  readonly #ordersById = new Map<string, Order>();
  /**
   * Per user, sorted oldest first (createdAt asc, id asc): inserts of a growing clock append at the
   * end, and newest-first paging walks back from the end, so a page costs O(limit), not a scan.
   */
  readonly #ordersByUser = new Map<string, Order[]>();
  readonly #usersByName = new Map<string, User>();
  readonly #userIds = new Set<string>();
  /** Insertion order is the outbox's seq order. */
  readonly #outbox = new Map<string, OutboxRow>();
  readonly #keys = new Map<string, KeyClaim>();
  readonly #prng: Prng | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    this.#prng = options.seed === undefined ? undefined : new Prng(options.seed);
  }

  /** Consults trouble, then (seeded) lets a drawn number of turns pass before the operation takes effect. */
  async #begin(operation: string, background = false): Promise<void> {
    await (background ? this.trouble.checkBackground(operation) : this.trouble.check(operation));
    for (let turns = this.#prng?.int(MAX_TURNS) ?? 0; turns > 0; turns--) await Promise.resolve();
  }

  async insert(order: Order): Promise<void> {
    await this.#begin('insert order');
    if (this.#ordersById.has(order.id)) throw duplicateKey('insert order', 'orders_pkey');
    this.#store(order);
  }

  #store(order: Order): void {
    const stored = copyOrder(order);
    this.#ordersById.set(stored.id, stored);
    let list = this.#ordersByUser.get(stored.userId);
    if (list === undefined) {
      list = [];
      this.#ordersByUser.set(stored.userId, list);
    }
    list.splice(insertionIndex(list, stored), 0, stored);
  }

  async place(placement: Placement): Promise<PlacementResult> {
    await this.#begin('place order');
    const { order, event, idempotency } = placement;
    const keyId = idempotency === undefined ? undefined : `${order.userId}\u0000${idempotency.key}`;
    if (idempotency !== undefined && keyId !== undefined) {
      const claim = this.#keys.get(keyId);
      if (claim !== undefined && claim.expiresAt > idempotency.now) {
        if (claim.fingerprint !== idempotency.fingerprint) return { outcome: 'key-mismatch' };
        const original = this.#ordersById.get(claim.orderId);
        if (original === undefined) throw new Error('idempotency key claimed but its order is missing');
        return { outcome: 'replayed', order: copyOrder(original) };
      }
    }
    if (this.#ordersById.has(order.id)) throw duplicateKey('place order', 'orders_pkey');
    if (this.#outbox.has(event.id)) throw duplicateKey('place order', 'order_outbox_pkey');
    this.#store(order);
    this.#outbox.set(event.id, {
      envelope: { id: event.id, event: { ...event.event } },
      createdAt: new Date(order.createdAt.getTime()),
      sentAt: undefined,
      claimed: false,
    });
    if (idempotency !== undefined && keyId !== undefined) {
      this.#keys.set(keyId, { fingerprint: idempotency.fingerprint, orderId: order.id, expiresAt: idempotency.expiresAt });
    }
    return { outcome: 'created', order: copyOrder(order) };
  }

  async relayPending(limit: number, send: SendBatch): Promise<{ claimed: number; sent: number }> {
    await this.#begin('relay outbox', true);
    const rows: OutboxRow[] = [];
    for (const row of this.#outbox.values()) {
      if (rows.length >= limit) break;
      if (row.sentAt === undefined && !row.claimed) rows.push(row);
    }
    for (const row of rows) row.claimed = true;
    try {
      const acked = new Set(await send(rows.map((row) => ({ id: row.envelope.id, event: { ...row.envelope.event } }))));
      // The database may have gone away while the batch was out: then nothing is marked (rollback).
      await this.trouble.checkBackground('mark sent');
      const now = new Date();
      for (const row of rows) if (acked.has(row.envelope.id)) row.sentAt = now;
      return { claimed: rows.length, sent: rows.filter((row) => acked.has(row.envelope.id)).length };
    } finally {
      for (const row of rows) row.claimed = false;
    }
  }

  async backlog(): Promise<OutboxBacklog> {
    await this.#begin('outbox backlog', true);
    let pending = 0;
    let oldestCreatedAt: Date | undefined;
    for (const row of this.#outbox.values()) {
      if (row.sentAt !== undefined) continue;
      pending += 1;
      if (oldestCreatedAt === undefined || row.createdAt < oldestCreatedAt) oldestCreatedAt = row.createdAt;
    }
    return { pending, oldestCreatedAt: oldestCreatedAt === undefined ? undefined : new Date(oldestCreatedAt.getTime()) };
  }

  async purge(now: Date): Promise<number> {
    await this.#begin('purge idempotency keys', true);
    let deleted = 0;
    for (const [key, claim] of this.#keys) {
      if (claim.expiresAt <= now) {
        this.#keys.delete(key);
        deleted += 1;
      }
    }
    return deleted;
  }

  /** As in PostgreSQL: an announced event's row is deleted (a row that is gone was announced). */
  async announceOnce(ids: readonly string[], announce: (fresh: ReadonlySet<string>) => void): Promise<void> {
    await this.#begin('record notification', true);
    const fresh = new Set(ids.filter((id) => this.#outbox.has(id)));
    announce(fresh);
    for (const id of fresh) this.#outbox.delete(id);
  }

  /** Pending (unsent) outbox events, oldest first, for assertions. */
  pendingEvents(): OrderPlacedEnvelope[] {
    return [...this.#outbox.values()].filter((row) => row.sentAt === undefined).map((row) => row.envelope);
  }

  async findById(id: string): Promise<Order | undefined> {
    await this.#begin('find order');
    const order = this.#ordersById.get(id);
    return order === undefined ? undefined : copyOrder(order);
  }

  async listByUser(userId: string, page: Page): Promise<Order[]> {
    await this.#begin('list orders');
    const list = this.#ordersByUser.get(userId) ?? [];
    const result: Order[] = [];
    const start = list.length - 1 - page.offset;
    for (let i = start; i >= 0 && result.length < page.limit; i--) result.push(copyOrder(list[i] as Order));
    return result;
  }

  async findByUsername(username: string): Promise<User | undefined> {
    await this.#begin('find user');
    const user = this.#usersByName.get(username);
    return user === undefined ? undefined : { ...user };
  }

  async add(user: User): Promise<void> {
    await this.#begin('add user');
    // PostgreSQL text cannot hold U+0000 (SQLSTATE 22021): the adapter reports an integrity fault, not a conflict.
    if (user.username.includes('\u0000'))
      throw new ErrUnavailable('database: add user: integrity: row rejected by the database (SQLSTATE 22021)');
    if (this.#usersByName.has(user.username)) throw duplicateKey('add user', 'users_username_key');
    if (this.#userIds.has(user.id)) throw duplicateKey('add user', 'users_pkey');
    this.#usersByName.set(user.username, { id: user.id, username: user.username, passwordHash: user.passwordHash });
    this.#userIds.add(user.id);
  }

  health(): Promise<void> {
    return this.trouble.health();
  }
}

/** A unique violation as adapters/postgres/errors.ts translates SQLSTATE 23505. */
function duplicateKey(operation: string, constraint: string): ErrConflict {
  return new ErrConflict(`database: ${operation}: duplicate key (constraint ${constraint})`);
}

function copyOrder(order: Order): Order {
  return {
    id: order.id,
    userId: order.userId,
    item: order.item,
    quantity: order.quantity,
    status: order.status,
    createdAt: new Date(order.createdAt.getTime()),
  };
}

/** Ascending (createdAt, id): the reverse of the port's newest-first order. */
function compareAsc(a: Order, b: Order): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function insertionIndex(list: readonly Order[], order: Order): number {
  // Fast path: the clock only moves forward in practice.
  const last = list[list.length - 1];
  if (last === undefined || compareAsc(last, order) <= 0) return list.length;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareAsc(list[mid] as Order, order) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
