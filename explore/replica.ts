import type { ServiceConfig } from '../src/config/service.ts';
import { ComponentChecker } from '../src/lifecycle/checker.ts';
import type { Component } from '../src/lifecycle/component.ts';
import type { Order } from '../src/domain/order.ts';
import type { CredentialStore } from '../src/ports/credential-store.ts';
import type { LogFields, Logger } from '../src/ports/logger.ts';
import type { OrderCache } from '../src/ports/order-cache.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../src/ports/order-events.ts';
import type { OrderRepository, Placement, PlacementResult } from '../src/ports/order-repository.ts';
import type { NotificationLedger, OutboxStore } from '../src/ports/outbox.ts';
import type { Timers } from '../src/ports/timers.ts';
import { AuthService } from '../src/service/auth-service.ts';
import { defaultLoginGateLimits, LoginGate } from '../src/service/login-gate.ts';
import { Notifier } from '../src/service/notifier.ts';
import { OrderService, type OrderServiceDeps } from '../src/service/order-service.ts';
import { OutboxRelay, type OutboxRelayOptions } from '../src/service/outbox-relay.ts';
import { TokenService } from '../src/service/token-service.ts';
import { SessionScope } from '../src/session/scope.ts';
import { ClientAddressResolver } from '../src/rate-limit/client-address.ts';
import { HttpRateLimiter } from '../src/rate-limit/limiter.ts';
import type { RateLimitDecision, RateLimitStore } from '../src/rate-limit/store.ts';
import { TokenBucketLimiter } from '../src/rate-limit/store.ts';
import { RestApi } from '../src/transports/http/rest/api.ts';
import { NearOrderCache } from '../speed/near-order-cache.ts';
import { DERIVATION_MS } from './spec-constants.ts';
import type { SimBackends } from './sim-fakes.ts';
import type { SimRuntime } from './sim-runtime.ts';

/** The ports one replica reaches the shared backends through. */
export interface ReplicaPorts {
  readonly repository: OrderRepository;
  readonly credentials: CredentialStore;
  readonly cache: OrderCache;
  readonly outbox: OutboxStore;
  readonly ledger: NotificationLedger;
  readonly publisher: OrderEventPublisher;
  readonly subscriber: OrderEventSubscriber;
}

/**
 * A deliberately broken variant of the service, for the explorer's own tests (explore/broken-variants.ts):
 * it decorates the ports or replaces one part a replica is built from. Product code has no switch for it.
 */
export interface Variant {
  readonly name: string;
  /** `run` is one object per run, shared by its replicas: a variant keeps per-run state under it. */
  wrapPorts?(ports: ReplicaPorts, run: object): ReplicaPorts;
  createOrderService?(deps: OrderServiceDeps, sessions: SessionScope): OrderService;
  createRelay?(outbox: OutboxStore, publisher: OrderEventPublisher, logger: Logger, options: OutboxRelayOptions): OutboxRelay;
  /** The timers the session scope lingers on. */
  sessionTimers?(timers: Timers): Timers;
  /** The token service: `now` is the fleet's clock in ms. */
  createTokens?(secret: string, lifetimeMs: number, now: () => number): TokenService;
  /** The signal the login gate is handed for a login (the caller's, as RestApi passes it). */
  gateSignal?(signal: AbortSignal | undefined): AbortSignal | undefined;
}

export interface LogLine {
  readonly replica: number;
  readonly incarnation: number;
  readonly msg: string;
  readonly fields: LogFields;
  /** When it was written, on the fleet's clock. */
  readonly at: number;
}

/** Which store took a rate-limit decision: each replica's own bucket, or the fleet's shared one. */
export type DecisionSource = 'local' | 'shared';

export interface ReplicaOptions {
  readonly index: number;
  readonly incarnation: number;
  readonly config: ServiceConfig;
  readonly runtime: SimRuntime;
  readonly backends: SimBackends;
  /** Every line the fleet logs while alive, in order (the notifier's and the sessions' lines are checked). */
  readonly lines: LogLine[];
  /** Called with each placement the database committed for this replica (ground truth for the checks). */
  readonly onCommitted: (order: Order, eventId: string) => void;
  readonly newId: () => string;
  readonly variant: Variant | undefined;
  /** Called each time a delivery of this replica ends unacknowledged (the broker delivers it again later). */
  readonly onUnacknowledged: () => void;
  /** The relay's batch (undefined: the product's 256), scaled down on some seeds so a run fills it. */
  readonly relayBatch: number | undefined;
  /** The cores of the machine the replica is sized for (its login gate's limits). */
  readonly cores: number;
  /** The fleet's shared rate-limit store (RATE_LIMIT_STORE=redis), or undefined (memory). */
  readonly sharedLimiter: RateLimitStore | undefined;
  /** Where the replica records which store took each decision it returns. */
  readonly decisions: WeakMap<RateLimitDecision, DecisionSource>;
}

/** A dead process cannot go on: what it still had in flight fails where it next touches the world. */
export class ProcessGone extends Error {
  constructor() {
    super('replica: process gone');
  }
}

/** The HMAC of jose runs on the thread pool: through the runtime's lane, so its order is the schedule's. */
class LaneTokenService extends TokenService {
  readonly #runtime: SimRuntime;
  readonly #inner: TokenService | undefined;
  constructor(secret: string, lifetimeMs: number, runtime: SimRuntime, inner: TokenService | undefined) {
    super(secret, lifetimeMs, () => runtime.nowMs());
    this.#runtime = runtime;
    this.#inner = inner;
  }
  override issue(userId: string, username: string): Promise<string> {
    return this.#runtime.serial(() => (this.#inner === undefined ? super.issue(userId, username) : this.#inner.issue(userId, username)));
  }
  override verify(token: string): ReturnType<TokenService['verify']> {
    return this.#runtime.serial(() => (this.#inner === undefined ? super.verify(token) : this.#inner.verify(token)));
  }
}

/**
 * scrypt runs on the thread pool too: each admitted derivation goes through the lane, and takes
 * DERIVATION_MS of simulated time first, so logins wait in the gate's queue while the clock moves (and
 * a caller can go away while it waits there). The gate gets the caller's signal, as RestApi passes it.
 */
class LaneLoginGate extends LoginGate {
  readonly #runtime: SimRuntime;
  readonly #variant: Variant | undefined;
  constructor(runtime: SimRuntime, variant: Variant | undefined, cores: number) {
    // The limits of a machine with `cores`, whatever this one has: the schedule must not depend on the host.
    super(defaultLoginGateLimits(cores));
    this.#runtime = runtime;
    this.#variant = variant;
  }
  override run<T>(client: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const handed = this.#variant?.gateSignal === undefined ? signal : this.#variant.gateSignal(signal);
    return super.run(
      client,
      async () => {
        await this.#runtime.sleep(DERIVATION_MS);
        return this.#runtime.serial(work);
      },
      handed,
    );
  }
}

/** A token bucket that records which decisions it took (the explorer's EXPLORE-rate needs the source). */
function recording(
  bucket: TokenBucketLimiter,
  source: DecisionSource,
  decisions: WeakMap<RateLimitDecision, DecisionSource>,
): TokenBucketLimiter {
  const take = bucket.take.bind(bucket);
  bucket.take = (key: string): RateLimitDecision => {
    const decision = take(key);
    decisions.set(decision, source);
    return decision;
  };
  return bucket;
}

/**
 * One replica: the objects the composition root (src/composition/create-app.ts) wires for a process,
 * built the same way on the shared fakes, without the parts that only move bytes (listeners, transport
 * adapters, metrics, tracing). Requests reach it through the framework-neutral RestApi, the rate limiter
 * and `authenticate`, as every HTTP transport calls them. Its long-running parts run their own loops on
 * the fleet's simulated clock: the relay's run() (rounds, backoff with jitter, backlog sampler, key
 * purger) and the notifier's consume loop.
 */
export class Replica {
  readonly index: number;
  readonly incarnation: number;
  readonly config: ServiceConfig;
  readonly tokens: TokenService;
  readonly sessions: SessionScope;
  readonly orders: OrderService;
  readonly api: RestApi;
  /** The login gate, watched by the explorer (EXPLORE-login-gate: only callers still there wait in it). */
  readonly gate: LoginGate;
  readonly limiter: HttpRateLimiter;
  /** The process's own token buckets (the limiter's local store), watched for their memory bound. */
  readonly buckets: TokenBucketLimiter;
  readonly relay: OutboxRelay;
  readonly notifier: Notifier;
  readonly checker: ComponentChecker;
  /** Alive: takes requests and touches the world. Killed or stopped: neither. */
  alive = true;
  /** Event ids this replica's notifier holds right now (delivered, not yet acknowledged). */
  readonly inHand = new Set<string>();
  /** Injected lost acknowledgements left (the broker redelivers what was handled). */
  lostAcks = 0;
  readonly #run = new AbortController();
  readonly #notifierRun: Promise<void>;
  readonly #relayRun: Promise<void>;
  readonly #onUnacknowledged: () => void;

  constructor(options: ReplicaOptions) {
    const { config, runtime, backends, variant } = options;
    this.index = options.index;
    this.incarnation = options.incarnation;
    this.config = config;
    this.#onUnacknowledged = options.onUnacknowledged;
    const logger = this.#logger(options.lines, runtime);
    const fenced = this.#fence(backends, options.onCommitted);
    const ports = variant?.wrapPorts?.(fenced, backends) ?? fenced;
    const now = (): number => runtime.nowMs();
    this.tokens = new LaneTokenService(
      config.tokens.secret,
      config.tokens.expiryMs,
      runtime,
      variant?.createTokens?.(config.tokens.secret, config.tokens.expiryMs, now),
    );
    this.sessions = new SessionScope({
      recentCapacity: config.sessionRecent,
      logger,
      timers: variant?.sessionTimers?.(runtime.time) ?? runtime.time,
    });
    const deps: OrderServiceDeps = {
      repository: ports.repository,
      // As the executables run: with the speed ring's near tier (speed/near-order-cache.ts).
      cache: new NearOrderCache(ports.cache, { clock: runtime.time }),
      sessions: this.sessions,
      logger,
      clock: runtime.time,
      newId: options.newId,
    };
    this.orders = variant?.createOrderService?.(deps, this.sessions) ?? new OrderService(deps);
    this.gate = new LaneLoginGate(runtime, variant, options.cores);
    this.api = new RestApi(new AuthService(ports.credentials, this.tokens, this.gate), this.orders);
    this.buckets = recording(new TokenBucketLimiter(config.rateLimitRps, config.rateLimitRps, now), 'local', options.decisions);
    this.limiter = new HttpRateLimiter({
      resolver: new ClientAddressResolver(config.trustProxy),
      local: this.buckets,
      shared: options.sharedLimiter,
      logger,
    });
    this.notifier = new Notifier(ports.subscriber, ports.ledger, logger);
    const relayOptions: OutboxRelayOptions = {
      clock: runtime.time,
      timers: runtime.time,
      ...(options.relayBatch === undefined ? {} : { batchSize: options.relayBatch }),
    };
    this.relay =
      variant?.createRelay?.(ports.outbox, ports.publisher, logger, relayOptions) ??
      new OutboxRelay(ports.outbox, ports.publisher, logger, relayOptions);
    // The health nodes of spec 2.3 as createApp lists them: the publisher's includes the relay's
    // backlog (rule EVT-7-delivery), sampled by the relay's own loop.
    const relay = this.relay;
    const publisher: Component = {
      name: backends.bus.name,
      async health() {
        await backends.bus.health();
        await relay.backlogHealth();
      },
    };
    this.checker = new ComponentChecker([backends.store, backends.cache, publisher]);
    this.#notifierRun = this.notifier.run(this.#run.signal);
    this.#relayRun = this.relay.run(this.#run.signal).catch(() => undefined);
  }

  /** SIGKILL: memory gone, nothing flushed, the consumer leaves the broker; what is in flight fails. */
  kill(): string[] {
    const held = [...this.inHand];
    this.alive = false;
    this.#run.abort();
    return held;
  }

  /**
   * SIGTERM, in the runner's stop order (spec 3.4; createApp's component list reversed): the consume
   * loop returns, then the relay flushes the outbox, the notifier drains, the sessions flush.
   */
  async stop(): Promise<void> {
    this.#run.abort();
    await this.#notifierRun;
    await this.#relayRun;
    await this.relay.stop();
    await this.notifier.stop();
    await this.sessions.stop();
    this.alive = false;
  }

  #logger(lines: LogLine[], runtime: SimRuntime): Logger {
    const record = (fields: LogFields, msg: string): void => {
      if (this.alive) lines.push({ replica: this.index, incarnation: this.incarnation, msg, fields, at: runtime.nowMs() });
    };
    return { debug: record, info: record, warn: record, error: record };
  }

  #check(): void {
    if (!this.alive) throw new ProcessGone();
  }

  /**
   * The replica's side of every port: a dead process neither starts a call nor sees its answer. What
   * the database committed for it before it died stays committed (as in PostgreSQL).
   */
  #fence(backends: SimBackends, onCommitted: (order: Order, eventId: string) => void): ReplicaPorts {
    const { store, cache, bus } = backends;
    const guard = async <T>(call: () => Promise<T>): Promise<T> => {
      this.#check();
      const result = await call();
      this.#check();
      return result;
    };
    return {
      repository: {
        ...fenced<OrderRepository>(store, guard),
        place: (placement: Placement) =>
          guard(async (): Promise<PlacementResult> => {
            const result = await store.place(placement);
            if (result.outcome === 'created') onCommitted(result.order, placement.event.id);
            return result;
          }),
      },
      credentials: fenced<CredentialStore>(store, guard),
      cache: fenced<OrderCache>(cache, guard),
      outbox: {
        ...fenced<OutboxStore>(store, guard),
        relayPending: (limit, send) =>
          guard(() =>
            store.relayPending(limit, async (batch) => {
              this.#check();
              const acked = await send(batch);
              // Died after the broker's acks, before the commit of the sent marks: nothing is marked.
              this.#check();
              return acked;
            }),
          ),
      },
      ledger: {
        announceOnce: (ids, announce) =>
          guard(() =>
            store.announceOnce(ids, (fresh) => {
              this.#check();
              announce(fresh);
            }),
          ),
      },
      publisher: { publishOrderPlaced: (envelope) => guard(() => bus.publishOrderPlaced(envelope)) },
      subscriber: {
        consumeOrderPlaced: (handler, signal) => bus.consumeOrderPlaced(this.#holding(handler), signal),
        drainOrderPlaced: (handler, timeoutMs) => bus.drainOrderPlaced(this.#holding(handler), timeoutMs),
      },
    };
  }

  /** Tracks what this replica holds, and acknowledges only while alive (or loses the ack when told to). */
  #holding(handler: OrderPlacedHandler): OrderPlacedHandler {
    return async (batch: readonly OrderPlacedEnvelope[]) => {
      for (const envelope of batch) this.inHand.add(envelope.id);
      try {
        this.#check();
        await handler(batch);
        this.#check();
        if (this.lostAcks > 0) {
          this.lostAcks -= 1;
          throw new Error('explore: acknowledgement lost');
        }
      } catch (error) {
        this.#onUnacknowledged();
        throw error;
      } finally {
        for (const envelope of batch) this.inHand.delete(envelope.id);
      }
    };
  }
}

/**
 * `port` as a plain object whose every method (its class's and its ancestors') runs behind `guard`: a
 * method added to a port is fenced without a line here. Every port method is async, as `guard` is.
 */
function fenced<T extends object>(port: T, guard: <R>(call: () => Promise<R>) => Promise<R>): T {
  const methods: Record<string, unknown> = {};
  for (let proto = Object.getPrototypeOf(port) as object; proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object) {
    for (const [name, { value }] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name === 'constructor' || name in methods || typeof value !== 'function') continue;
      methods[name] = (...args: unknown[]) => guard(() => (value as (...a: unknown[]) => Promise<unknown>).apply(port, args));
    }
  }
  return methods as T;
}
