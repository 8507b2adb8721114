import type { ServiceConfig } from '../src/config/service.ts';
import { ComponentChecker } from '../src/lifecycle/checker.ts';
import type { Order } from '../src/domain/order.ts';
import type { CredentialStore } from '../src/ports/credential-store.ts';
import type { LogFields, Logger } from '../src/ports/logger.ts';
import type { OrderCache } from '../src/ports/order-cache.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../src/ports/order-events.ts';
import type { OrderRepository, Placement, PlacementResult } from '../src/ports/order-repository.ts';
import type { NotificationLedger, OutboxStore } from '../src/ports/outbox.ts';
import { AuthService } from '../src/service/auth-service.ts';
import { defaultLoginGateLimits, LoginGate } from '../src/service/login-gate.ts';
import { Notifier } from '../src/service/notifier.ts';
import { OrderService, type OrderServiceDeps } from '../src/service/order-service.ts';
import { OutboxRelay } from '../src/service/outbox-relay.ts';
import { TokenService } from '../src/service/token-service.ts';
import { SessionScope } from '../src/session/scope.ts';
import { ClientAddressResolver } from '../src/rate-limit/client-address.ts';
import { HttpRateLimiter } from '../src/rate-limit/limiter.ts';
import { TokenBucketLimiter } from '../src/rate-limit/store.ts';
import { RestApi } from '../src/transports/http/rest/api.ts';
import { NearOrderCache } from '../speed/near-order-cache.ts';
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
 * it decorates the ports or the order service a replica is built from. Product code has no switch for it.
 */
export interface Variant {
  readonly name: string;
  /** `run` is one object per run, shared by its replicas: a variant keeps per-run state under it. */
  wrapPorts?(ports: ReplicaPorts, run: object): ReplicaPorts;
  createOrderService?(deps: OrderServiceDeps, sessions: SessionScope): OrderService;
}

export interface LogLine {
  readonly replica: number;
  readonly incarnation: number;
  readonly msg: string;
  readonly fields: LogFields;
}

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
  constructor(secret: string, lifetimeMs: number, runtime: SimRuntime) {
    super(secret, lifetimeMs, () => runtime.nowMs());
    this.#runtime = runtime;
  }
  override issue(userId: string, username: string): Promise<string> {
    return this.#runtime.serial(() => super.issue(userId, username));
  }
  override verify(token: string): ReturnType<TokenService['verify']> {
    return this.#runtime.serial(() => super.verify(token));
  }
}

/** scrypt runs on the thread pool too: each admitted derivation goes through the lane. */
class LaneLoginGate extends LoginGate {
  readonly #runtime: SimRuntime;
  constructor(runtime: SimRuntime) {
    // The limits of a 2-core machine, whatever this one has: the schedule must not depend on the host.
    super(defaultLoginGateLimits(2));
    this.#runtime = runtime;
  }
  override run<T>(client: string, work: () => Promise<T>): Promise<T> {
    return super.run(client, () => this.#runtime.serial(work));
  }
}

/**
 * One replica: the objects the composition root (src/composition/create-app.ts) wires for a process,
 * built the same way on the shared fakes, without the parts that only move bytes (listeners, transport
 * adapters, metrics, tracing). Requests reach it through the framework-neutral RestApi, the rate limiter
 * and `authenticate`, as every HTTP transport calls them. The relay's rounds are driven by the explorer
 * (relayOnce, its real loop sleeps on the machine's clock); the notifier runs its real consume loop.
 */
export class Replica {
  readonly index: number;
  readonly incarnation: number;
  readonly config: ServiceConfig;
  readonly tokens: TokenService;
  readonly sessions: SessionScope;
  readonly orders: OrderService;
  readonly api: RestApi;
  readonly limiter: HttpRateLimiter;
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
  readonly #onUnacknowledged: () => void;

  constructor(options: ReplicaOptions) {
    const { config, runtime, backends } = options;
    this.index = options.index;
    this.incarnation = options.incarnation;
    this.config = config;
    this.#onUnacknowledged = options.onUnacknowledged;
    const logger = this.#logger(options.lines);
    const fenced = this.#fence(backends, options.onCommitted);
    const ports = options.variant?.wrapPorts?.(fenced, backends) ?? fenced;
    this.tokens = new LaneTokenService(config.tokens.secret, config.tokens.expiryMs, runtime);
    this.sessions = new SessionScope({ recentCapacity: config.sessionRecent, logger, timers: runtime.time });
    const deps: OrderServiceDeps = {
      repository: ports.repository,
      // As the executables run: with the speed ring's near tier (speed/near-order-cache.ts).
      cache: new NearOrderCache(ports.cache, { clock: runtime.time }),
      sessions: this.sessions,
      logger,
      clock: runtime.time,
      newId: options.newId,
    };
    this.orders = options.variant?.createOrderService?.(deps, this.sessions) ?? new OrderService(deps);
    this.api = new RestApi(new AuthService(ports.credentials, this.tokens, new LaneLoginGate(runtime)), this.orders);
    this.limiter = new HttpRateLimiter({
      resolver: new ClientAddressResolver(config.trustProxy),
      local: new TokenBucketLimiter(config.rateLimitRps, config.rateLimitRps, () => runtime.nowMs()),
      logger,
    });
    this.notifier = new Notifier(ports.subscriber, ports.ledger, logger);
    this.relay = new OutboxRelay(ports.outbox, ports.publisher, logger, { clock: runtime.time });
    // The health nodes of spec 2.3, as createApp lists them (the relay's backlog is sampled by its own
    // loop, which the explorer does not run, so the publisher node here is the broker's alone).
    this.checker = new ComponentChecker([backends.store, backends.cache, backends.bus]);
    this.#notifierRun = this.notifier.run(this.#run.signal);
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
    await this.relay.stop();
    await this.notifier.stop();
    await this.sessions.stop();
    this.alive = false;
  }

  #logger(lines: LogLine[]): Logger {
    const record = (fields: LogFields, msg: string): void => {
      if (this.alive) lines.push({ replica: this.index, incarnation: this.incarnation, msg, fields });
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
