import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrUnavailable } from '../../domain/errors.ts';
import { ORDER_PLACED_SUBJECT, type OrderPlaced } from '../../domain/order-placed.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../observability/logger.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedHandler } from '../../ports/order-events.ts';
import type { NatsConfig } from './nats-config.ts';

export interface NatsEventBusOptions {
  /** Defaults to orders.placed; tests pass a unique subject per run. */
  readonly subject?: string;
  /** Bound on the single start-up connect. */
  readonly connectTimeoutMs?: number;
  /** Bound on the health round trip (a flush). */
  readonly healthTimeoutMs?: number;
  /** Bound on draining a subscription or the connection before falling back to a hard close. */
  readonly drainTimeoutMs?: number;
}

/**
 * Order-placed events on core NATS (at most once, no replay: spec 6 rule 7 leaves delivery open).
 * Start-up connects once (spec 3.4 rule 2); afterwards the client reconnects forever in the background
 * and resubscribes on its own. While disconnected, publish rejects with ErrUnavailable instead of
 * letting the client buffer the message: the caller learns the event was not sent (its failure path,
 * spec 6 rule 3) and memory does not grow for the length of an outage.
 */
export class NatsEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly #config: NatsConfig;
  readonly #logger: Logger;
  readonly #subject: string;
  readonly #connectTimeoutMs: number;
  readonly #healthTimeoutMs: number;
  readonly #drainTimeoutMs: number;
  #nc: NatsConnection | undefined;
  /** Tracked from the client's status stream: isClosed() alone stays false during an outage. */
  #connected = false;
  #stopping = false;

  constructor(config: NatsConfig, logger: Logger, options: NatsEventBusOptions = {}) {
    if (config === undefined) throw new Error('NatsEventBus: config is required');
    if (logger === undefined) throw new Error('NatsEventBus: logger is required');
    this.#config = config;
    this.#logger = logger;
    this.#subject = options.subject ?? ORDER_PLACED_SUBJECT;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
    this.#healthTimeoutMs = options.healthTimeoutMs ?? 1_000;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 2_000;
  }

  get subject(): string {
    return this.#subject;
  }

  async init(): Promise<void> {
    if (this.#nc !== undefined) throw new Error('publisher: init called twice');
    let nc: NatsConnection;
    try {
      // waitOnFirstConnect stays off: with it, connect never settles while the server is down.
      nc = await connect({
        servers: [...this.#config.servers],
        timeout: this.#connectTimeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        reconnectJitter: 50,
        // Notice a half-open connection within ~30 s even when no traffic flows.
        pingInterval: 10_000,
        maxPingOut: 2,
        name: 'orders',
      });
    } catch (err) {
      throw new ErrUnavailable(`publisher: cannot connect to NATS_URL (${this.#config.display}): ${describe(err)}`, { cause: err });
    }
    this.#nc = nc;
    this.#connected = true;
    void this.#watchStatus(nc);
    void nc.closed().then((err) => {
      this.#connected = false;
      if (!this.#stopping) {
        this.#logger.error({ component: this.name, error: err ? describe(err) : 'closed' }, 'publisher: connection closed');
      }
    });
  }

  async publishOrderPlaced(event: OrderPlaced): Promise<void> {
    const nc = this.#require('publish');
    if (nc.isClosed() || !this.#connected) throw new ErrUnavailable('publisher: publish: not connected to the broker');
    try {
      // No per-message flush: core NATS cannot confirm delivery anyway and a flush would add a round trip per order.
      nc.publish(this.#subject, JSON.stringify(event));
    } catch (err) {
      throw new ErrUnavailable(`publisher: publish: ${describe(err)}`, { cause: err });
    }
  }

  /** Subscribes synchronously (before the first await), so a publish right after the call is seen. */
  async consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const nc = this.#require('consume');
    let sub: Subscription;
    try {
      sub = nc.subscribe(this.#subject);
    } catch (err) {
      throw new ErrUnavailable(`publisher: subscribe: ${describe(err)}`, { cause: err });
    }
    const onAbort = (): void => void this.#finish(sub);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const msg of sub) {
        const event = decodeOrderPlaced(msg.string());
        if (event === undefined) {
          this.#logger.warn({ component: this.name, subject: msg.subject }, 'events: undecodable order-placed message dropped');
          continue;
        }
        try {
          await handler(event);
        } catch (err) {
          this.#logger.error({ err, order_id: event.order_id }, 'events: handler failed');
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    // The subscription ended without our abort or stop: a real failure (spec 3.4 rule 4).
    if (!signal.aborted && !this.#stopping) throw new ErrUnavailable('publisher: subscription closed unexpectedly');
  }

  /** Resolves only while connected and a round trip (flush) completes in time. */
  async health(): Promise<void> {
    const nc = this.#require('health');
    if (nc.isClosed()) throw new ErrUnavailable('publisher: connection closed');
    if (!this.#connected) throw new ErrUnavailable('publisher: disconnected from the broker; reconnecting');
    await withTimeout(nc.flush(), this.#healthTimeoutMs, 'publisher: broker did not answer a flush in time');
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const nc = this.#nc;
    if (nc === undefined || nc.isClosed()) return;
    try {
      if (!this.#connected) throw new Error('not connected');
      await withTimeout(nc.drain(), this.#drainTimeoutMs, 'drain timed out');
    } catch {
      await nc.close();
    }
  }

  /** Drain delivers what already arrived; while disconnected a drain would wait for the reconnect, so unsubscribe. */
  async #finish(sub: Subscription): Promise<void> {
    if (sub.isClosed()) return;
    try {
      if (!this.#connected) throw new Error('not connected');
      await withTimeout(sub.drain(), this.#drainTimeoutMs, 'drain timed out');
    } catch {
      if (!sub.isClosed()) sub.unsubscribe();
    }
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      switch (status.type) {
        case 'disconnect':
          // One line per outage: 'reconnecting' repeats per attempt and is not logged.
          if (this.#connected) this.#logger.warn({ component: this.name, servers: this.#config.display }, 'publisher: connection lost; reconnecting in the background');
          this.#connected = false;
          break;
        case 'reconnect':
          this.#connected = true;
          this.#logger.info({ component: this.name, servers: this.#config.display }, 'publisher: connection restored');
          break;
        case 'error':
          this.#logger.warn({ component: this.name, error: describe(status.error) }, 'publisher: broker reported an error');
          break;
        default:
          break;
      }
    }
  }

  #require(operation: string): NatsConnection {
    if (this.#nc === undefined) throw new ErrUnavailable(`publisher: ${operation}: not connected`);
    return this.#nc;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ErrUnavailable(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function decodeOrderPlaced(text: string): OrderPlaced | undefined {
  let value: Partial<OrderPlaced> | null;
  try {
    value = JSON.parse(text) as Partial<OrderPlaced> | null;
  } catch {
    return undefined;
  }
  if (
    typeof value !== 'object' || value === null ||
    typeof value.order_id !== 'string' || typeof value.user_id !== 'string' || typeof value.item !== 'string' ||
    typeof value.quantity !== 'number' || typeof value.created_at !== 'string'
  ) {
    return undefined;
  }
  return { order_id: value.order_id, user_id: value.user_id, item: value.item, quantity: value.quantity, created_at: value.created_at };
}
