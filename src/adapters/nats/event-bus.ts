/**
 * Order-placed events on NATS JetStream (rule EVT-7-delivery): the publisher the outbox relay sends through
 * and the subscriber the notifier consumes from, one connection for both (health node `publisher`).
 * The relay publishes with Nats-Msg-Id = event id and waits for the stream's acknowledgement, so the broker
 * drops a duplicate inside its window. Every replica pulls from one durable consumer, so each event goes to
 * one of them, acknowledged only after the handler resolved. Start-up connects once and creates or checks
 * the stream (spec 3.4 rule 2); afterwards the client reconnects forever in the background.
 */
import {
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { setImmediate as afterIo, setTimeout as sleep } from 'node:timers/promises';
import { ErrUnavailable } from '../../domain/errors.ts';
import { ORDER_PLACED_SUBJECT, type OrderPlaced } from '../../domain/order-placed.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../../ports/order-events.ts';
import type { NatsConfig } from './config.ts';
import { ensureOrderStream, ORDER_STREAM_DEFAULTS } from './order-stream.ts';

/** Publishes to the stream, each resolved once the stream stored it (or already had its id). */
export interface StreamPublisher {
  publish(subject: string, payload: string, msgId: string): Promise<void>;
  /** After the connection drained or closed: fails whatever still waits. */
  close(): void;
}

/** Built once connected; `timeoutMs` bounds the wait for one acknowledgement. */
export type StreamPublisherFactory = (nc: NatsConnection, js: JetStreamClient, timeoutMs: number) => StreamPublisher;

export const jetstreamPublisher: StreamPublisherFactory = (_nc, js) => ({
  publish: async (subject, payload, msgId) => void (await js.publish(subject, payload, { msgID: msgId })),
  close: () => undefined,
});

const DEFAULTS = {
  ...ORDER_STREAM_DEFAULTS,
  subject: ORDER_PLACED_SUBJECT,
  /** Bound on the single start-up connect and stream check. */
  connectTimeoutMs: 2_000,
  /** Bound on the health round trip (a JetStream API request). */
  healthTimeoutMs: 1_000,
  /** Bound on waiting for the stream's acknowledgement of one publish. */
  publishTimeoutMs: 2_000,
  /** Bound on draining the connection at stop before a hard close. */
  drainTimeoutMs: 2_000,
  /** Client pings: a connection is declared stale after two unanswered ones (not the client's 4 min default). */
  pingIntervalMs: 2_000,
  /** Tests on a shared server: delete the stream (and its consumer) at stop. */
  deleteStreamOnStop: false,
  /** How the relay's publishes are sent and acknowledged: js.publish unless the speed ring gives another. */
  streamPublisher: jetstreamPublisher,
};

export type NatsEventBusOptions = Partial<typeof DEFAULTS>;

/** Messages pulled ahead per replica, and the bound of one handled batch. */
const PULL_BATCH = 64;
const NOT_READY = Symbol('not ready');
/** A drain pull's life on the server; the minimum the client accepts is 1 s. */
const PULL_EXPIRES_MS = 1_000;
const RETRY_MS = 250;
/** A failed handler's batch comes back after this delay (JetStream nak with delay), not after ack_wait. */
const REDELIVER_DELAY_MS = 1_000;

export class NatsEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly #config: NatsConfig;
  readonly #logger: Logger;
  readonly #options: typeof DEFAULTS;
  #nc: NatsConnection | undefined;
  #js: JetStreamClient | undefined;
  #acks: StreamPublisher | undefined;
  /** A manager whose requests time out after healthTimeoutMs: the health probe. */
  #probe: JetStreamManager | undefined;
  /** From the client's status stream: isClosed() alone stays false during an outage. */
  #connected = false;
  #stopping = false;

  constructor(config: NatsConfig, logger: Logger, options: NatsEventBusOptions = {}) {
    this.#config = config;
    this.#logger = logger;
    this.#options = { ...DEFAULTS, ...options, streamPublisher: options.streamPublisher ?? jetstreamPublisher };
  }

  get subject(): string {
    return this.#options.subject;
  }
  get stream(): string {
    return this.#options.stream;
  }

  /** Whether the broker connection is up, as its status stream last said (the orders_backend_connected gauge). */
  connected(): boolean {
    return this.#connected;
  }

  async init(): Promise<void> {
    if (this.#nc !== undefined) throw new Error('publisher: init called twice');
    const o = this.#options;
    let nc: NatsConnection;
    try {
      // waitOnFirstConnect stays off: with it, connect never settles while the server is down.
      nc = await connect({
        servers: [...this.#config.servers],
        ...this.#config.credentials,
        timeout: o.connectTimeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        reconnectJitter: 50,
        pingInterval: o.pingIntervalMs,
        maxPingOut: 2,
        name: 'orders',
        // Async traces build two Errors (stack captured) per request in advance: ~5% of a POST's CPU
        // (bench/profile.ts); a failure still rejects with the client's error.
        noAsyncTraces: true,
      });
    } catch (err) {
      throw new ErrUnavailable(`publisher: cannot connect to NATS_URL (${this.#config.display}): ${describe(err)}`, { cause: err });
    }
    this.#nc = nc;
    this.#connected = true;
    try {
      await ensureOrderStream(await jetstreamManager(nc, { timeout: o.connectTimeoutMs }), o);
      this.#probe = await jetstreamManager(nc, { timeout: o.healthTimeoutMs, checkAPI: false });
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw new ErrUnavailable(`publisher: JetStream stream ${o.stream} unavailable: ${describe(err)}`, { cause: err });
    }
    this.#js = jetstream(nc, { timeout: o.publishTimeoutMs });
    this.#acks = o.streamPublisher(nc, this.#js, o.publishTimeoutMs);
    void this.#watchStatus(nc);
    void nc.closed().then((err) => {
      this.#connected = false;
      // nats.js closes a connection on its own only with an error; without one, only our own close.
      if (!this.#stopping)
        this.#logger.error({ component: this.name, error: err ? describe(err) : 'closed' }, 'publisher: connection closed');
    });
  }

  /** While disconnected, rejects at once rather than let the client buffer: memory does not grow with an outage. */
  async publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void> {
    const acks = this.#acks;
    if (acks === undefined) throw new ErrUnavailable('publisher: publish: not connected');
    if (!this.#connected) throw new ErrUnavailable('publisher: publish: not connected to the broker');
    try {
      // The wire form (spec 6 rule 6, our choice): JSON with the snake_case fields.
      await acks.publish(this.#options.subject, JSON.stringify(envelope.event), envelope.id);
    } catch (err) {
      throw new ErrUnavailable(`publisher: publish: ${describe(err)}`, { cause: err });
    }
  }

  async consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void> {
    const js = this.#js;
    if (js === undefined) throw new ErrUnavailable('publisher: consume: not connected');
    let interrupted = false;
    while (!signal.aborted && !this.#stopping) {
      let messages: ConsumerMessages | undefined;
      const onAbort = (): void => void messages?.close();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const consumer = await js.consumers.get(this.#options.stream, this.#options.durable);
        if (signal.aborted) return;
        messages = await consumer.consume({ max_messages: PULL_BATCH, expires: 5_000 });
        interrupted = false;
        // On abort, close() queues its end behind what was already pulled: those are handled first.
        const iterator = messages[Symbol.asyncIterator]();
        // Asked for before it is awaited (while a batch is handled): a failure is seen when awaited, not unhandled.
        const ask = (): Promise<IteratorResult<JsMsg>> => {
          const asked = iterator.next();
          asked.catch(() => undefined);
          return asked;
        };
        let next = ask();
        for (let first = await next; first.done !== true; first = await next) {
          // What is ready before the event loop's next turn joins the batch (one ledger transaction). Not the
          // client's getPending(), which also counts its pull refills: a batch that trusted it waited past
          // ack_wait for messages that were not coming, and got its events twice (rule EVT-7-delivery).
          const batch = [first.value];
          next = ask();
          while (batch.length < PULL_BATCH) {
            const more = await Promise.race([next, afterIo(NOT_READY)]);
            if (more === NOT_READY || more.done === true) break;
            batch.push(more.value);
            next = ask();
          }
          await this.#handle(handler, batch);
        }
        throw new ErrUnavailable('consumer ended'); // not by us (consumer deleted, connection gone): resume below
      } catch (err) {
        if (signal.aborted || this.#stopping) return;
        // A closed connection never comes back: a real failure of the run (spec 3.4 rule 4).
        if (this.#nc?.isClosed() === true) throw new ErrUnavailable('publisher: consume: connection closed', { cause: err });
        if (!interrupted) this.#logger.warn({ component: this.name, error: describe(err) }, 'events: consumer interrupted; resuming');
        interrupted = true;
        await sleep(RETRY_MS, undefined, { signal }).catch(() => undefined);
      } finally {
        signal.removeEventListener('abort', onAbort);
        // For a throw inside the loop, which would otherwise leave the subscription and its pulled messages behind.
        await messages?.close().catch(() => undefined);
      }
    }
  }

  /** Pulls until nothing is pending or the time is up; what is left waits for the next process. */
  async drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void> {
    const js = this.#connected ? this.#js : undefined;
    if (js === undefined) return;
    const deadline = performance.now() + timeoutMs;
    try {
      const consumer = await js.consumers.get(this.#options.stream, this.#options.durable);
      while (performance.now() < deadline) {
        // Exactly what is pending, so the pull returns at once instead of waiting out its expiry.
        const pending = (await consumer.info(false)).num_pending;
        if (pending === 0) return;
        const batch: JsMsg[] = [];
        for await (const msg of await consumer.fetch({ max_messages: Math.min(pending, PULL_BATCH), expires: PULL_EXPIRES_MS }))
          batch.push(msg);
        await this.#handle(handler, batch);
      }
    } catch (err) {
      this.#logger.warn(
        { component: this.name, error: describe(err) },
        'events: drain cut short; the rest is redelivered to the next consumer',
      );
    }
  }

  /** Connected, and a JetStream API request answered within healthTimeoutMs (a stalled server fails this). */
  async health(): Promise<void> {
    const probe = this.#probe;
    if (probe === undefined) throw new ErrUnavailable('publisher: not connected');
    if (this.#nc!.isClosed()) throw new ErrUnavailable('publisher: connection closed');
    if (!this.#connected) throw new ErrUnavailable('publisher: disconnected from the broker; reconnecting');
    try {
      await probe.getAccountInfo();
    } catch (err) {
      throw new ErrUnavailable(
        `publisher: broker did not answer a JetStream request within ${this.#options.healthTimeoutMs} ms: ${describe(err)}`,
      );
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const nc = this.#nc;
    if (nc === undefined || nc.isClosed()) return;
    if (this.#options.deleteStreamOnStop && this.#connected) await this.#probe?.streams.delete(this.#options.stream).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      // A drain while disconnected would wait for a reconnect attempt to end: closed at once instead.
      if (!this.#connected) throw new Error('not connected');
      await Promise.race([nc.drain(), new Promise((_, reject) => (timer = setTimeout(reject, this.#options.drainTimeoutMs)))]);
    } catch {
      await nc.close();
    } finally {
      clearTimeout(timer);
      this.#acks?.close();
    }
  }

  /**
   * Acknowledged only after the handler resolved (rule EVT-7-delivery); a failure naks the batch with a delay
   * so its events come back, possibly to another replica. An undecodable message can never succeed: terminated.
   */
  async #handle(handler: OrderPlacedHandler, msgs: readonly JsMsg[]): Promise<void> {
    const decoded: Array<{ msg: JsMsg; envelope: OrderPlacedEnvelope }> = [];
    for (const msg of msgs) {
      const id = messageId(msg);
      const event = decodeOrderPlaced(msg.string());
      if (event === undefined || id === '') {
        this.#logger.warn({ component: this.name, subject: msg.subject, seq: msg.seq }, 'events: undecodable order-placed message dropped');
        // No reason text: nats-server 2.9 ignores a `+TERM <reason>`, and the message came back every ack_wait.
        settle(() => msg.term());
      } else {
        decoded.push({ msg, envelope: { id, event } });
      }
    }
    if (decoded.length === 0) return;
    try {
      await handler(decoded.map((d) => d.envelope));
    } catch (err) {
      const first = decoded[0]!.envelope;
      this.#logger.error(
        { err: describe(err), events: decoded.length, order_id: first.event.order_id, event_id: first.id },
        'events: handler failed',
      );
      for (const { msg } of decoded) settle(() => msg.nak(REDELIVER_DELAY_MS));
      return;
    }
    for (const { msg } of decoded) settle(() => msg.ack());
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    const component = this.name;
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'staleConnection') {
        // One line per outage: 'reconnecting' repeats per attempt and is not logged.
        if (this.#connected)
          this.#logger.warn(
            { component, servers: this.#config.display, reason: status.type },
            'publisher: connection lost; reconnecting in the background',
          );
        this.#connected = false;
      } else if (status.type === 'reconnect') {
        this.#connected = true;
        this.#logger.info({ component, servers: this.#config.display }, 'publisher: connection restored');
      } else if (status.type === 'error') {
        this.#logger.warn({ component, error: describe(status.error) }, 'publisher: broker reported an error');
      }
    }
  }
}

/** The event in `text`, or undefined when it is no JSON object with every field of its type; other fields are dropped. */
export function decodeOrderPlaced(text: string): OrderPlaced | undefined {
  let value: Partial<OrderPlaced> | null;
  try {
    value = JSON.parse(text) as Partial<OrderPlaced> | null;
  } catch {
    return undefined;
  }
  // A JSON primitive has none of the fields, as {} has none; only null cannot be destructured.
  const { order_id, user_id, item, quantity, created_at } = value ?? {};
  if (
    typeof order_id !== 'string' ||
    typeof user_id !== 'string' ||
    typeof item !== 'string' ||
    typeof quantity !== 'number' ||
    typeof created_at !== 'string'
  ) {
    return undefined;
  }
  return { order_id, user_id, item, quantity, created_at };
}

/** An ack or nak on a closed connection throws; the broker then redelivers after ack_wait anyway. */
function settle(action: () => void): void {
  try {
    action();
  } catch {
    // redelivered after ack_wait
  }
}

/**
 * The message's Nats-Msg-Id, or '' when it has none or its header block cannot be read: nats.js throws on a
 * malformed line (a name with a space), which would otherwise end the consume loop with the batch unsettled.
 */
function messageId(msg: JsMsg): string {
  try {
    return msg.headers?.get('Nats-Msg-Id') ?? '';
  } catch {
    return '';
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
