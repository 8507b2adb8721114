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
import { ORDER_PLACED_SUBJECT } from '../../domain/order-placed.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../../ports/order-events.ts';
import type { NatsConfig } from './nats-config.ts';
import { decodeOrderPlaced, encodeOrderPlaced } from './order-placed-codec.ts';
import { ensureOrderStream, ORDER_STREAM_DEFAULTS, type OrderStreamSettings } from './order-stream.ts';

export interface NatsEventBusOptions extends Partial<OrderStreamSettings> {
  /** Bound on the single start-up connect. */
  readonly connectTimeoutMs?: number;
  /** Bound on the health round trip (a JetStream API request). */
  readonly healthTimeoutMs?: number;
  /** Bound on waiting for the broker's acknowledgement of one publish. */
  readonly publishTimeoutMs?: number;
  /** Bound on draining the connection before falling back to a hard close. */
  readonly drainTimeoutMs?: number;
  /** Client pings: a connection is declared stale after two unanswered ones. */
  readonly pingIntervalMs?: number;
  /** Tests on a shared server: delete the stream (and its consumer) at stop. */
  readonly deleteStreamOnStop?: boolean;
  /** How the relay's publishes are sent and acknowledged; js.publish unless composition chooses otherwise. */
  readonly streamPublisher?: StreamPublisherFactory;
}

/** Publishes to the stream, each resolved once the stream stored it (or already had its id). */
export interface StreamPublisher {
  publish(subject: string, payload: string, msgId: string): Promise<void>;
  /** After the connection drained or closed: fails whatever still waits. */
  close(): void;
}

/** Built once connected; `timeoutMs` bounds the wait for one acknowledgement (js.publish: the client's own timeout). */
export type StreamPublisherFactory = (nc: NatsConnection, js: JetStreamClient, timeoutMs: number) => StreamPublisher;

/** The client library's acknowledged publish: Nats-Msg-Id = the event id, so the stream drops duplicates. */
export const jetstreamPublisher: StreamPublisherFactory = (_nc, js) => ({
  publish: async (subject, payload, msgId) => void (await js.publish(subject, payload, { msgID: msgId })),
  close: () => undefined,
});

/** Messages pulled ahead per replica; they are this replica's until acknowledged or ack_wait passes. */
const PULL_BATCH = 64;
/** What a batch's race for the next message gets when none is ready yet. */
const NOT_READY = Symbol('not ready');
/** A pull request's life on the server; the minimum the client accepts is 1 s. */
const PULL_EXPIRES_MS = 1_000;
const RETRY_MS = 250;
/** A failed handler's batch comes back after this delay (JetStream nak with delay). */
const REDELIVER_DELAY_MS = 1_000;

/**
 * Order-placed events on NATS JetStream (rule EVT-7-delivery). The relay publishes with Nats-Msg-Id = event id
 * and waits for the stream's acknowledgement; the broker drops duplicates of an id inside the
 * stream's duplicate window. Every replica consumes through one durable pull consumer, so each
 * event goes to one of them; an event is acknowledged only after the handler resolved.
 * Start-up connects once and creates or checks the stream (spec 3.4 rule 2); afterwards the client
 * reconnects forever in the background.
 */
export class NatsEventBus implements OrderEventPublisher, OrderEventSubscriber, Component {
  readonly name = 'publisher';
  readonly #config: NatsConfig;
  readonly #logger: Logger;
  readonly #settings: OrderStreamSettings;
  readonly #connectTimeoutMs: number;
  readonly #healthTimeoutMs: number;
  readonly #publishTimeoutMs: number;
  readonly #drainTimeoutMs: number;
  readonly #pingIntervalMs: number;
  readonly #deleteStreamOnStop: boolean;
  #nc: NatsConnection | undefined;
  #js: JetStreamClient | undefined;
  readonly #streamPublisher: StreamPublisherFactory;
  /** The relay's publishes and their acknowledgements. */
  #acks: StreamPublisher | undefined;
  /** A manager whose requests time out after healthTimeoutMs: the health probe. */
  #probe: JetStreamManager | undefined;
  /** Tracked from the client's status stream: isClosed() alone stays false during an outage. */
  #connected = false;
  #stopping = false;

  /** Whether the broker connection is up, as its status stream last said (observability/backend-metrics.ts). */
  connected(): boolean {
    return this.#connected;
  }

  constructor(config: NatsConfig, logger: Logger, options: NatsEventBusOptions = {}) {
    if (config === undefined) throw new Error('NatsEventBus: config is required');
    if (logger === undefined) throw new Error('NatsEventBus: logger is required');
    this.#config = config;
    this.#logger = logger;
    this.#settings = {
      stream: options.stream ?? ORDER_STREAM_DEFAULTS.stream,
      subject: options.subject ?? ORDER_PLACED_SUBJECT,
      durable: options.durable ?? ORDER_STREAM_DEFAULTS.durable,
      duplicateWindowMs: options.duplicateWindowMs ?? ORDER_STREAM_DEFAULTS.duplicateWindowMs,
      maxAgeMs: options.maxAgeMs ?? ORDER_STREAM_DEFAULTS.maxAgeMs,
      ackWaitMs: options.ackWaitMs ?? ORDER_STREAM_DEFAULTS.ackWaitMs,
    };
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
    this.#healthTimeoutMs = options.healthTimeoutMs ?? 1_000;
    this.#publishTimeoutMs = options.publishTimeoutMs ?? 2_000;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? 2_000;
    this.#pingIntervalMs = options.pingIntervalMs ?? 2_000;
    this.#deleteStreamOnStop = options.deleteStreamOnStop ?? false;
    this.#streamPublisher = options.streamPublisher ?? jetstreamPublisher;
  }

  get subject(): string {
    return this.#settings.subject;
  }

  get stream(): string {
    return this.#settings.stream;
  }

  async init(): Promise<void> {
    if (this.#nc !== undefined) throw new Error('publisher: init called twice');
    let nc: NatsConnection;
    try {
      // waitOnFirstConnect stays off: with it, connect never settles while the server is down.
      nc = await connect({
        servers: [...this.#config.servers],
        ...this.#config.credentials,
        timeout: this.#connectTimeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        reconnectJitter: 50,
        // A stalled server (SIGSTOP) is declared stale after ~2 intervals, not the default 4 min.
        pingInterval: this.#pingIntervalMs,
        maxPingOut: 2,
        name: 'orders',
        // With async traces the client builds two Error objects (stack captured) in advance for every
        // request (JetStream API calls, pulls); when publishes were requests that was ~5% of a POST's CPU
        // (bench/profile.ts --scenario post). Failures still reject with the client's error; only the
        // caller's stack is not attached.
        noAsyncTraces: true,
      });
    } catch (err) {
      throw new ErrUnavailable(`publisher: cannot connect to NATS_URL (${this.#config.display}): ${describe(err)}`, { cause: err });
    }
    this.#nc = nc;
    this.#connected = true;
    try {
      const jsm = await jetstreamManager(nc, { timeout: this.#connectTimeoutMs });
      await ensureOrderStream(jsm, this.#settings);
      this.#probe = await jetstreamManager(nc, { timeout: this.#healthTimeoutMs, checkAPI: false });
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw new ErrUnavailable(`publisher: JetStream stream ${this.#settings.stream} unavailable: ${describe(err)}`, { cause: err });
    }
    this.#js = jetstream(nc, { timeout: this.#publishTimeoutMs });
    this.#acks = this.#streamPublisher(nc, this.#js, this.#publishTimeoutMs);
    void this.#watchStatus(nc);
    void nc.closed().then((err) => {
      this.#connected = false;
      if (!this.#stopping) {
        // nats.js closes a connection on its own only with an error (its reconnect loop always throws one);
        // without one, only our own close, after #stopping is set.
        const error = err ? describe(err) : 'closed';
        this.#logger.error({ component: this.name, error }, 'publisher: connection closed');
      }
    });
  }

  /**
   * While disconnected, rejects at once instead of letting the client buffer the message: the relay
   * backs off and retries, and memory does not grow for the length of an outage.
   */
  async publishOrderPlaced(envelope: OrderPlacedEnvelope): Promise<void> {
    const acks = this.#acks;
    if (acks === undefined) throw new ErrUnavailable('publisher: publish: not connected');
    if (!this.#connected) throw new ErrUnavailable('publisher: publish: not connected to the broker');
    try {
      await acks.publish(this.#settings.subject, encodeOrderPlaced(envelope.event), envelope.id);
    } catch (err) {
      throw new ErrUnavailable(`publisher: publish: ${describe(err)}`, { cause: err });
    }
  }

  async consumeOrderPlaced(handler: OrderPlacedHandler, signal: AbortSignal): Promise<void> {
    const js = this.#requireJs('consume');
    let interrupted = false;
    while (!signal.aborted && !this.#stopping) {
      let messages: ConsumerMessages | undefined;
      const onAbort = (): void => void messages?.close();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const consumer = await js.consumers.get(this.#settings.stream, this.#settings.durable);
        if (signal.aborted) return;
        messages = await consumer.consume({ max_messages: PULL_BATCH, expires: 5_000 });
        interrupted = false;
        // On abort, close() queues its end behind what was already pulled: those are handled first.
        const iterator = messages[Symbol.asyncIterator]();
        // Asked for before it is awaited (while a batch is handled): a failure is seen when it is awaited,
        // not reported unhandled in between.
        const ask = (): Promise<IteratorResult<JsMsg>> => {
          const asked = iterator.next();
          asked.catch(() => undefined);
          return asked;
        };
        let next = ask();
        for (;;) {
          const first = await next;
          if (first.done === true) break;
          // Whatever else already arrived joins the batch: one ledger transaction for all of them. "Already
          // arrived" is "the next message is ready before the event loop's next turn": the client's own
          // count (getPending) also counts its pull-refill callbacks, and a batch that trusted it waited for
          // messages that were not coming, past ack_wait, and got its events twice (rule EVT-7-delivery).
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
        // Ended: by our abort or stop (the catch returns), or else (consumer deleted, connection gone): resume
        // after a pause, below.
        throw new ErrUnavailable('consumer ended');
      } catch (err) {
        if (signal.aborted || this.#stopping) return;
        // A closed connection never comes back: a real failure of the run (spec 3.4 rule 4).
        if (this.#nc?.isClosed() === true) throw new ErrUnavailable('publisher: consume: connection closed', { cause: err });
        // One line per interruption, not one per retry while the broker is away.
        if (!interrupted) this.#logger.warn({ component: this.name, error: describe(err) }, 'events: consumer interrupted; resuming');
        interrupted = true;
        await sleep(RETRY_MS, undefined, { signal }).catch(() => undefined);
      } finally {
        signal.removeEventListener('abort', onAbort);
        // Already closed on every way out the loop has (their own end or error, our abort's close); kept for
        // a throw inside it, which would otherwise leave the subscription and its pulled messages behind.
        await messages?.close().catch(() => undefined);
      }
    }
  }

  /** Pulls until a pull comes back empty or the time is up; what is left waits for the next process. */
  async drainOrderPlaced(handler: OrderPlacedHandler, timeoutMs: number): Promise<void> {
    // Nothing to drain before init or while the broker is away (the client exists once init has connected).
    const js = this.#connected ? this.#js : undefined;
    if (js === undefined) return;
    const deadline = performance.now() + timeoutMs;
    try {
      const consumer = await js.consumers.get(this.#settings.stream, this.#settings.durable);
      while (performance.now() < deadline) {
        // Ask for exactly what is pending, so the pull returns at once instead of waiting out its expiry.
        const pending = (await consumer.info(false)).num_pending;
        if (pending === 0) return;
        const messages = await consumer.fetch({ max_messages: Math.min(pending, PULL_BATCH), expires: PULL_EXPIRES_MS });
        const batch: JsMsg[] = [];
        for await (const msg of messages) batch.push(msg);
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
    // init makes the probe on the connection, after it: with a probe there is a connection.
    const nc = this.#nc!;
    if (nc.isClosed()) throw new ErrUnavailable('publisher: connection closed');
    if (!this.#connected) throw new ErrUnavailable('publisher: disconnected from the broker; reconnecting');
    try {
      // A backstop in case the client's request never settles: its own timer (healthTimeoutMs, set first) fires first.
      await withTimeout(probe.getAccountInfo(), this.#healthTimeoutMs + 100, 'request timed out');
    } catch (err) {
      throw new ErrUnavailable(`publisher: broker did not answer a JetStream request within ${this.#healthTimeoutMs} ms: ${describe(err)}`);
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const nc = this.#nc;
    if (nc === undefined || nc.isClosed()) return;
    if (this.#deleteStreamOnStop && this.#connected) {
      await this.#probe?.streams.delete(this.#settings.stream).catch(() => undefined);
    }
    try {
      if (!this.#connected) throw new Error('not connected');
      await withTimeout(nc.drain(), this.#drainTimeoutMs, 'drain timed out');
    } catch {
      await nc.close();
    } finally {
      this.#acks?.close();
    }
  }

  /**
   * Acknowledge only after the handler resolved (rule EVT-7-delivery); a failure naks the batch with a delay so
   * its events come back, possibly to another replica. An undecodable message can never succeed:
   * terminated.
   */
  async #handle(handler: OrderPlacedHandler, msgs: readonly JsMsg[]): Promise<void> {
    const decoded: Array<{ msg: JsMsg; envelope: OrderPlacedEnvelope }> = [];
    for (const msg of msgs) {
      const id = messageId(msg);
      const event = decodeOrderPlaced(msg.string());
      if (event === undefined || id === '') {
        this.#logger.warn({ component: this.name, subject: msg.subject, seq: msg.seq }, 'events: undecodable order-placed message dropped');
        // No reason text: nats-server 2.9 (the stand-in image's) ignores a `+TERM <reason>` acknowledgement,
        // and the message would come back every ack_wait forever.
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
    for await (const status of nc.status()) {
      switch (status.type) {
        case 'disconnect':
        case 'staleConnection':
          // One line per outage: 'reconnecting' repeats per attempt and is not logged.
          if (this.#connected)
            this.#logger.warn(
              { component: this.name, servers: this.#config.display, reason: status.type },
              'publisher: connection lost; reconnecting in the background',
            );
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

  #requireJs(operation: string): JetStreamClient {
    if (this.#js === undefined) throw new ErrUnavailable(`publisher: ${operation}: not connected`);
    return this.#js;
  }
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
 * The message's Nats-Msg-Id, or '' when it has none or its header block cannot be read: nats.js parses
 * headers on first access and throws on a malformed line (a name with a space), which would otherwise end
 * the consume loop, leave the message and the rest of its batch unsettled, and bring it back every ack wait.
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
