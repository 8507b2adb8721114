import type { OrderPlaced } from '../src/domain/order-placed.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { Logger } from '../src/ports/logger.ts';
import { systemTimers, type Timers } from '../src/ports/timers.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../src/ports/order-events.ts';
import { Prng } from './prng.ts';
import { Trouble } from './trouble.ts';

export interface MemoryEventBusOptions {
  /** Where a failing handler is reported; silent when absent. */
  readonly logger?: Logger;
  /** A failed handler's batch comes back after this long (the adapter naks with 1 s; short here so tests do not wait it out). */
  readonly redeliverDelayMs?: number;
  /** A delivery not acknowledged within this long comes back: the durable consumer's ack_wait (4 s, adapters/nats/order-stream.ts). */
  readonly ackWaitMs?: number;
  /** The largest batch one handler call gets: the adapter's pull batch (64, adapters/nats/event-bus.ts). */
  readonly maxBatch?: number;
  /**
   * Where the bus waits (the down poll, redelivery, ack_wait): real timers unless given. The explorer
   * (explore/) passes its simulated time, so a seed replays the same deliveries at the same moments.
   */
  readonly timers?: Timers;
  /**
   * The delivery shapes of a busy JetStream consumer, drawn from this seed (fakes/README.md): batches of any
   * size up to what is ready, an event twice in one batch (its ack_wait ran out while it waited in the pull
   * buffer), acknowledgements that land out of order, a few ms apart, or never (partial acknowledgement:
   * those come back after ackWaitMs). Without a seed: everything ready in one batch, every ack at once.
   */
  readonly seed?: number;
}

/** How often a consumer looks again while the broker is down (trouble.down). */
const DOWN_POLL_MS = 20;
const PULL_BATCH = 64;
const ACK_WAIT_MS = 4_000;
/** Seeded shapes: how often a batch holds a redelivery of one of its own events, and how often an ack is lost. */
const PULL_BUFFER_REDELIVERY = 0.1;
const LOST_ACK = 0.05;
/** Seeded acks land within this many ms of the handler's end, in a drawn order (one round trip each). */
const ACK_SPREAD_MS = 5;

/**
 * In-process broker with the JetStream semantics of the real adapter (rule EVT-7-delivery): a stream that stores
 * each event once per id (Nats-Msg-Id deduplication; the fake's window is its whole life), and one durable
 * consumer shared by every consumeOrderPlaced call: each batch goes to one of them, events published while
 * nobody consumed wait. A delivery is acknowledged after its handler resolved; a failed handler's batch comes
 * back after redeliverDelayMs (nak), an unacknowledged one after ackWaitMs, redeliveries before new events.
 * While `trouble` is down, publish rejects, nothing is delivered and acknowledgements are lost.
 */
export class MemoryEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly trouble = new Trouble('publisher');
  /** The stream: every event stored, in order, once per id, for assertions. */
  readonly published: OrderPlaced[] = [];
  /** Publishes dropped as duplicates of an id already stored. */
  duplicates = 0;
  readonly #ids = new Set<string>();
  /** Ready for delivery: redeliveries (nak'd or past ack_wait) first, as JetStream serves them, then new events. */
  readonly #redelivered: OrderPlacedEnvelope[] = [];
  readonly #fresh: OrderPlacedEnvelope[] = [];
  /** Delivered and not yet acknowledged, by id: the timer that puts each back (ack_wait, or the nak delay). */
  readonly #pending = new Map<string, unknown>();
  readonly #waiters = new Set<() => void>();
  readonly #logger: Logger | undefined;
  readonly #redeliverDelayMs: number;
  readonly #ackWaitMs: number;
  readonly #maxBatch: number;
  readonly #timers: Timers;
  readonly #prng: Prng | undefined;
  #active = 0;

  constructor(options: MemoryEventBusOptions = {}) {
    this.#logger = options.logger;
    this.#redeliverDelayMs = options.redeliverDelayMs ?? 50;
    this.#ackWaitMs = options.ackWaitMs ?? ACK_WAIT_MS;
    this.#maxBatch = options.maxBatch ?? PULL_BATCH;
    this.#timers = options.timers ?? systemTimers;
    this.#prng = options.seed === undefined ? undefined : new Prng(options.seed);
  }

  /** Consumers running right now. */
  get consumerCount(): number {
    return this.#active;
  }

  /** Events stored but not yet acknowledged: waiting for delivery, or delivered and not yet acknowledged. */
  get unacknowledged(): number {
    return this.#redelivered.length + this.#fresh.length + this.#pending.size;
  }

  async publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void> {
    await this.trouble.check('publish');
    if (this.#ids.has(envelope.id)) {
      this.duplicates += 1;
      return;
    }
    this.#ids.add(envelope.id);
    this.published.push({ ...envelope.event });
    this.#fresh.push({ id: envelope.id, event: { ...envelope.event } });
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
        const batch = this.#takeBatch();
        if (batch.length === 0) {
          await new Promise<void>((resolve) => this.#waiters.add(resolve));
          continue;
        }
        await this.#deliver(handler, batch);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#active -= 1;
    }
  }

  /** As the adapter's drain: what is ready now (not what is delivered and unacknowledged), until the time is up. */
  async drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void> {
    const deadline = this.#timers.nowMs() + timeoutMs;
    while (!this.trouble.isDown && this.#timers.nowMs() < deadline) {
      const batch = this.#takeBatch();
      if (batch.length === 0) return;
      await this.#deliver(handler, batch);
    }
  }

  async health(): Promise<void> {
    await this.trouble.health();
  }

  /** What the adapter gathers before handling: every ready event up to maxBatch, or, seeded, a drawn part of them. */
  #takeBatch(): OrderPlacedEnvelope[] {
    const ready = this.#redelivered.length + this.#fresh.length;
    if (ready === 0) return [];
    const limit = Math.min(ready, this.#maxBatch);
    const size = this.#prng === undefined ? limit : 1 + this.#prng.int(limit);
    const batch = this.#redelivered.splice(0, size);
    batch.push(...this.#fresh.splice(0, size - batch.length));
    // The first delivery sat in the pull buffer past ack_wait: its redelivery joins the same batch, behind it.
    if (this.#prng !== undefined && batch.length < this.#maxBatch && this.#prng.chance(PULL_BUFFER_REDELIVERY)) {
      const first = this.#prng.int(batch.length);
      batch.splice(first + 1 + this.#prng.int(batch.length - first), 0, batch[first] as OrderPlacedEnvelope);
    }
    return batch;
  }

  async #deliver(handler: OrderPlacedHandler, batch: readonly OrderPlacedEnvelope[]): Promise<void> {
    const messages = [...new Map(batch.map((envelope) => [envelope.id, envelope])).values()];
    for (const envelope of messages) this.#putBackAfter(envelope, this.#ackWaitMs);
    try {
      await handler(batch);
    } catch (err) {
      const first = batch[0] as OrderPlacedEnvelope;
      // As the adapter logs it: one line per failed batch.
      this.#logger?.error(
        {
          err: err instanceof Error ? err.message : String(err),
          events: messages.length,
          order_id: first.event.order_id,
          event_id: first.id,
        },
        'events: handler failed',
      );
      // Nak with delay: back after redeliverDelayMs, possibly to another consumer.
      for (const envelope of messages) this.#putBackAfter(envelope, this.#redeliverDelayMs);
      return;
    }
    const prng = this.#prng;
    if (prng === undefined) {
      for (const { id } of messages) this.#acknowledge(id);
      return;
    }
    for (const { id } of prng.shuffled(messages)) {
      if (prng.chance(LOST_ACK)) continue; // never lands: back after ack_wait
      this.#timers.setTimeout(() => this.#acknowledge(id), prng.int(ACK_SPREAD_MS));
    }
  }

  /** Delivered and unacknowledged: comes back after `ms` unless acknowledged first. */
  #putBackAfter(envelope: OrderPlacedEnvelope, ms: number): void {
    const previous = this.#pending.get(envelope.id);
    if (previous !== undefined) this.#timers.clearTimeout(previous);
    const timer = this.#timers.setTimeout(() => {
      this.#pending.delete(envelope.id);
      this.#redelivered.push(envelope);
      this.#wake();
    }, ms);
    this.#pending.set(envelope.id, timer);
  }

  /** An ack sent while the broker is away is lost, as the adapter's is on a dropped connection. */
  #acknowledge(id: string): void {
    if (this.trouble.isDown) return;
    const timer = this.#pending.get(id);
    if (timer === undefined) return;
    this.#timers.clearTimeout(timer);
    this.#pending.delete(id);
  }

  #wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
