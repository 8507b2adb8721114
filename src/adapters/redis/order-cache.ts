/**
 * The order cache on Redis (rules SVC-cache-aside, SVC-cache-ttl). Start-up connects once with no retry
 * (rule LIFE-2-init-connect); after that an outage degrades instead of failing: commands reject at once
 * with ErrUnavailable, the service reads the database, and the client reconnects in the background.
 */
import type { Redis } from 'ioredis';
import { ErrUnavailable } from '../../domain/errors.ts';
import { ORDER_STATUS_PENDING, type Order } from '../../domain/order.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import type { OrderCache } from '../../ports/order-cache.ts';
import { closeRedisClient, createRedisClient, type RedisConfig } from './connection.ts';

/** Bounds on every command (PING included; default 500 ms) and on one TCP connect (default 2 s). */
export interface RedisOrderCacheOptions {
  readonly commandTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
}

/** The stored value: the order with snake_case keys and created_at as an ISO 8601 string. */
interface CachedOrder {
  readonly id: string;
  readonly user_id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

export class RedisOrderCache implements OrderCache, Component {
  readonly name = 'cache';
  readonly #config: RedisConfig;
  readonly #logger: Logger;
  readonly #options: RedisOrderCacheOptions;
  #client: Redis | undefined;
  /** Reconnecting is allowed only between a successful init and stop. */
  #running = false;
  #inOutage = false;

  constructor(config: RedisConfig, logger: Logger, options: RedisOrderCacheOptions = {}) {
    this.#config = config;
    this.#logger = logger;
    this.#options = options;
  }

  /** Whether the client is connected and ready for commands (observability/metrics.ts). */
  connected(): boolean {
    return this.#client?.status === 'ready';
  }

  get #address(): string {
    const { host, port } = this.#config;
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }

  async init(): Promise<void> {
    const client = createRedisClient(this.#config, {
      commandTimeoutMs: this.#options.commandTimeoutMs ?? 500,
      connectTimeoutMs: this.#options.connectTimeoutMs,
      reconnect: () => this.#running,
      // The SETs of creates that finish in one turn leave in one write, not one write and one Redis wake-up each.
      autoPipelining: true,
    });
    // Always listen: an 'error' event without a listener would crash the process.
    client.on('error', (err: Error) => this.#onConnectionTrouble(err));
    client.on('close', () => this.#onConnectionTrouble(undefined));
    client.on('ready', () => this.#onReady());
    try {
      await client.connect();
    } catch (err) {
      client.disconnect();
      throw new ErrUnavailable(`cache: cannot connect to REDIS_ADDR (${this.#address}): ${describe(err)}`, { cause: err });
    }
    this.#client = client;
    this.#running = true;
  }

  async get(id: string): Promise<Order | undefined> {
    const client = this.#requireClient('get');
    let raw: string | null;
    try {
      raw = await client.get(this.#key(id));
    } catch (err) {
      throw new ErrUnavailable(`cache: get: ${describe(err)}`, { cause: err });
    }
    // An entry we cannot read is a miss: the service reads the database and overwrites it.
    return raw === null ? undefined : decodeOrder(raw);
  }

  async set(order: Order): Promise<void> {
    const client = this.#requireClient('set');
    try {
      await client.set(this.#key(order.id), encodeOrder(order), 'EX', this.#config.ttlSeconds);
    } catch (err) {
      throw new ErrUnavailable(`cache: set: ${describe(err)}`, { cause: err });
    }
  }

  /** A real round trip (PING), bounded by the command timeout; the message names no secret. */
  async health(): Promise<void> {
    const client = this.#requireClient('health');
    // ioredis's own words for a dropped connection ("Stream isn't writeable…") mean nothing to an operator.
    if (client.status !== 'ready') throw new ErrUnavailable(`cache: not connected to REDIS_ADDR (${this.#address}); reconnecting`);
    try {
      await client.ping();
    } catch (err) {
      throw new ErrUnavailable(`cache: ping failed: ${describe(err)}`, { cause: err });
    }
  }

  async stop(): Promise<void> {
    const client = this.#client;
    this.#running = false;
    this.#client = undefined;
    if (client !== undefined) await closeRedisClient(client);
  }

  #key(id: string): string {
    return `${this.#config.keyPrefix}${id}`;
  }

  #requireClient(operation: string): Redis {
    if (this.#client === undefined) throw new ErrUnavailable(`cache: ${operation}: not connected`);
    return this.#client;
  }

  /** One warn line per outage, however many reconnect attempts fail in between. */
  #onConnectionTrouble(err: Error | undefined): void {
    if (!this.#running || this.#inOutage) return;
    this.#inOutage = true;
    this.#logger.warn(
      { component: this.name, addr: this.#address, error: err === undefined ? 'connection closed' : describe(err) },
      'cache: connection lost; reconnecting in the background, reads fall back to the database',
    );
  }

  #onReady(): void {
    if (!this.#inOutage) return;
    this.#inOutage = false;
    this.#logger.info({ component: this.name, addr: this.#address }, 'cache: connection restored');
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function encodeOrder(order: Order): string {
  const cached: CachedOrder = {
    id: order.id,
    user_id: order.userId,
    item: order.item,
    quantity: order.quantity,
    status: order.status,
    created_at: order.createdAt.toISOString(),
  };
  return JSON.stringify(cached);
}

/** The stored order, or undefined for anything that is not one. */
function decodeOrder(raw: string): Order | undefined {
  let value: Partial<CachedOrder> | null;
  try {
    value = JSON.parse(raw) as Partial<CachedOrder> | null;
  } catch {
    return undefined;
  }
  if (
    typeof value?.id !== 'string' ||
    typeof value.user_id !== 'string' ||
    typeof value.item !== 'string' ||
    typeof value.quantity !== 'number' ||
    value.status !== ORDER_STATUS_PENDING ||
    typeof value.created_at !== 'string'
  ) {
    return undefined;
  }
  const createdAt = new Date(value.created_at);
  if (Number.isNaN(createdAt.getTime())) return undefined;
  return { id: value.id, userId: value.user_id, item: value.item, quantity: value.quantity, status: ORDER_STATUS_PENDING, createdAt };
}
