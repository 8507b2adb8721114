import type { OrderPlaced } from '../src/domain/order-placed.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { Logger } from '../src/ports/logger.ts';
import { systemTimers, type Timers } from '../src/ports/timers.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../src/ports/order-events.ts';
import { Trouble } from './trouble.ts';

export interface MemoryEventBusOptions {
  /** Where a failing handler is reported; silent when absent. */
  readonly logger?: Logger;
  /** A failed delivery comes back after this long (JetStream nak delay). */
  readonly redeliverDelayMs?: number;
  /**
   * Where the bus waits (the down poll, the redelivery delay): real timers unless given. The explorer
   * (explore/) passes its simulated time, so a seed replays the same deliveries at the same moments.
   */
  readonly timers?: Timers;
}

/** How often a consumer looks again while the broker is down (trouble.down). */
const DOWN_POLL_MS = 20;

/**
 * In-process broker with the JetStream semantics of the real adapter (rule EVT-7-delivery): a stream that stores
 * each event once per id (Nats-Msg-Id deduplication; the fake's window is its whole life), and one
 * durable consumer shared by every consumeOrderPlaced call: each event goes to one of them, events
 * published while nobody consumed wait, a failed handler's event is delivered again. While
 * `trouble` is down, publish rejects and nothing is delivered.
 */
export class MemoryEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly trouble = new Trouble('publisher');
  /** The stream: every event stored, in order, once per id, for assertions. */
  readonly published: OrderPlaced[] = [];
  /** Publishes dropped as duplicates of an id already stored. */
  duplicates = 0;
  readonly #ids = new Set<string>();
  /** Stored but not yet delivered (or delivered and failed): the shared consumer's queue. */
  readonly #queue: OrderPlacedEnvelope[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #logger: Logger | undefined;
  readonly #redeliverDelayMs: number;
  readonly #timers: Timers;
  #active = 0;

  constructor(options: MemoryEventBusOptions = {}) {
    this.#logger = options.logger;
    this.#redeliverDelayMs = options.redeliverDelayMs ?? 50;
    this.#timers = options.timers ?? systemTimers;
  }

  /** Consumers running right now. */
  get consumerCount(): number {
    return this.#active;
  }

  /** Events stored but not yet acknowledged by a consumer. */
  get unacknowledged(): number {
    return this.#queue.length;
  }

  async publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void> {
    await this.trouble.check('publish');
    if (this.#ids.has(envelope.id)) {
      this.duplicates += 1;
      return;
    }
    this.#ids.add(envelope.id);
    this.published.push({ ...envelope.event });
    this.#queue.push({ id: envelope.id, event: { ...envelope.event } });
    this.#wake();
  }

  /** Delivery never runs inside publish's call stack. */
  async consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#active += 1;
    const onAbort = (): void => this.#wake();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        if (this.trouble.isDown) {
          await this.#timers.sleep(DOWN_POLL_MS);
          continue;
        }
        const next = this.#queue.shift();
        if (next === undefined) {
          await new Promise<void>((resolve) => this.#waiters.add(resolve));
          continue;
        }
        await this.#deliver(handler, next);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#active -= 1;
    }
  }

  async drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!this.trouble.isDown && performance.now() < deadline) {
      const next = this.#queue.shift();
      if (next === undefined) return;
      await this.#deliver(handler, next);
    }
  }

  async health(): Promise<void> {
    await this.trouble.health();
  }

  async #deliver(handler: OrderPlacedHandler, envelope: OrderPlacedEnvelope): Promise<void> {
    try {
      await handler([envelope]);
    } catch (err) {
      // Not acknowledged: delivered again after the delay, possibly to another consumer.
      this.#logger?.error(
        { err: err instanceof Error ? err.message : String(err), order_id: envelope.event.order_id, event_id: envelope.id },
        'events: handler failed',
      );
      this.#timers.setTimeout(() => {
        this.#queue.unshift(envelope);
        this.#wake();
      }, this.#redeliverDelayMs);
    }
  }

  #wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
