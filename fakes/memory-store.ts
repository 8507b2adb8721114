import { ErrConflict } from '../src/domain/errors.ts';
import type { Order } from '../src/domain/order.ts';
import type { User } from '../src/domain/user.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { CredentialStore } from '../src/ports/credential-store.ts';
import type { OrderRepository, Page } from '../src/ports/order-repository.ts';
import { Trouble } from './trouble.ts';

/**
 * In-memory OrderRepository + CredentialStore, held to the same contract tests as the Postgres
 * adapters (test/contracts). Every operation consults `trouble` first so a test can drive an outage.
 */
export class MemoryStore implements OrderRepository, CredentialStore, Component {
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

  async insert(order: Order): Promise<void> {
    await this.trouble.check('insert order');
    if (this.#ordersById.has(order.id)) throw new ErrConflict(`database: insert order: order ${order.id} already exists`);
    const stored = copyOrder(order);
    this.#ordersById.set(stored.id, stored);
    let list = this.#ordersByUser.get(stored.userId);
    if (list === undefined) {
      list = [];
      this.#ordersByUser.set(stored.userId, list);
    }
    list.splice(insertionIndex(list, stored), 0, stored);
  }

  async findById(id: string): Promise<Order | undefined> {
    await this.trouble.check('find order');
    const order = this.#ordersById.get(id);
    return order === undefined ? undefined : copyOrder(order);
  }

  async listByUser(userId: string, page: Page): Promise<Order[]> {
    await this.trouble.check('list orders');
    const list = this.#ordersByUser.get(userId) ?? [];
    const result: Order[] = [];
    const start = list.length - 1 - page.offset;
    for (let i = start; i >= 0 && result.length < page.limit; i--) result.push(copyOrder(list[i] as Order));
    return result;
  }

  async findByUsername(username: string): Promise<User | undefined> {
    await this.trouble.check('find user');
    const user = this.#usersByName.get(username);
    return user === undefined ? undefined : { ...user };
  }

  async add(user: User): Promise<void> {
    await this.trouble.check('add user');
    if (this.#usersByName.has(user.username)) throw new ErrConflict(`database: add user: username ${user.username} already exists`);
    if (this.#userIds.has(user.id)) throw new ErrConflict(`database: add user: user id ${user.id} already exists`);
    this.#usersByName.set(user.username, { id: user.id, username: user.username, passwordHash: user.passwordHash });
    this.#userIds.add(user.id);
  }

  health(): Promise<void> {
    return this.trouble.health();
  }
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
