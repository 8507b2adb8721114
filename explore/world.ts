// The World's state: the fleet, its clients, the model the checks compare with, and the simulated
// time it moves. Each concern above it (requests, logins, orders, health, steps, after-run checks,
// drain) is a subclass in its own file, so one run's state stays one object.
import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServiceConfig } from '../src/config/service.ts';
import type { Order } from '../src/domain/order.ts';
import { RATE_LIMIT_CHANNEL, type RateLimitEvent } from '../src/rate-limit/limiter.ts';
import { type RateLimitDecision, type RateLimitStore, TokenBucketLimiter } from '../src/rate-limit/store.ts';
import { Checks, INVARIANTS } from './invariants.ts';
import type { OrderDto } from './oracle.ts';
import { Prng } from './prng.ts';
import { Replica, type DecisionSource, type LogLine } from './replica.ts';
import { createSimBackends, type SimBackends } from './sim-fakes.ts';
import { SimRuntime } from './sim-runtime.ts';
import { CACHE_TTL_MS, IDEMPOTENCY_KEY_TTL_MS, loginGateLimits, RATE_BURST, RATE_PER_SECOND } from './spec-constants.ts';
import { FINE_ADVANCE_MS, SHARED_STORE_TIMEOUT_MS } from './world-constants.ts';
import type { RunOptions, CreateRequest, Client, SessionModel, KeyClaim } from './world-types.ts';
import { cheapHash, LEGACY, exploreConfig, addressOf } from './fleet-setup.ts';

export abstract class WorldState {
  readonly checks = new Checks();
  readonly trace: string[] = [];
  protected readonly hash = createHash('sha256');
  protected readonly options: RunOptions;
  protected readonly runtime = new SimRuntime();
  protected readonly ids: Prng;
  /** The relay's backoff jitter draws Math.random: during a run it draws from the seed. */
  protected readonly jitter: Prng;
  protected readonly random = Math.random;
  protected readonly config: ServiceConfig;
  /** Whether the balancer is trusted (TRUST_PROXY set), and the machine size the replicas' login gates are made for. */
  protected readonly trustProxy: boolean;
  protected readonly gate: ReturnType<typeof loginGateLimits>;
  protected readonly cores: number;
  protected readonly lines: LogLine[] = [];
  protected readonly backends: SimBackends;
  protected readonly replicas: Replica[] = [];
  protected readonly clients: Client[] = [];
  protected readonly requests: CreateRequest[] = [];
  /** Each create request by its body and user (a reuse of a key with a body sent before is that request again). */
  protected readonly byBody = new Map<string, CreateRequest>();
  /** Committed orders by their event's id. */
  protected readonly byEvent = new Map<string, Order>();
  /** Every order the database committed, with its event id: the ground truth of the checks. */
  protected readonly committed = new Map<string, { order: Order; eventId: string }>();
  /** What a 201 carried, by order id (also 201s that came after the client gave up). */
  protected readonly answered = new Map<string, OrderDto>();
  /** Per replica incarnation and user: the orders viewed there, and the views made. */
  protected readonly views = new Map<string, Set<string>>();
  protected readonly viewCounts = new Map<string, number>();
  /** Per replica incarnation and user: the session the explorer expects (deleted with the process). */
  protected readonly sessions = new Map<string, SessionModel>();
  /** Incarnations stopped gracefully (their sessions flushed) or still running at the end. */
  protected readonly flushed = new Set<string>();
  /** Admissions per decision store and client key: `local` per replica process, `shared` per fleet. */
  protected readonly admitted = new Map<string, { first: number; count: number }>();
  protected readonly decisions = new WeakMap<RateLimitDecision, DecisionSource>();
  /** What the limiter published on its diagnostics channel for each decision (its key and source). */
  protected readonly announcedDecisions = new WeakMap<RateLimitDecision, RateLimitEvent>();
  protected readonly onDecision = (message: unknown): void => {
    const event = message as RateLimitEvent;
    this.announcedDecisions.set(event.decision, event);
  };
  /** Per replica incarnation and client key: the last admission (the rate window's anchor). */
  protected readonly lastAdmission = new Map<string, number>();
  /** Events a replica held when it was killed: they may be announced twice (EXPLORE-announced). */
  protected readonly diedHolding = new Set<string>();
  protected readonly flights = new Set<Promise<void>>();
  /** Every replica incarnation of the run, dead ones too (a dead one may still hold a delivery). */
  protected readonly incarnations: Replica[] = [];
  /** The model of Idempotency-Keys: per user and key, the claim the database holds. */
  protected readonly claims = new Map<string, KeyClaim>();
  /** Per user and key: attempts in flight (their outcome is open, so an answer may go either way). */
  protected readonly keyFlights = new Map<string, number>();
  protected readonly keySends = new Map<string, number>();
  /** Per replica incarnation and user: requests in flight (a session read races them). */
  protected readonly userFlights = new Map<string, number>();
  /** Per replica incarnation: logins past the limiter whose client has not gone away, not yet answered. */
  protected readonly liveLogins = new Map<string, number>();
  /** Since when the database has been calm (no outage, no latency, no failure queued). */
  protected dbCalmSince = 0;
  /** Changes each time the database goes into trouble (down, fail-next): a 500 needs one. */
  protected dbTroubleEpoch = 0;
  protected readonly shared: RateLimitStore | undefined;

  constructor(options: RunOptions) {
    this.options = options;
    this.trustProxy = options.seed % 3 !== 0;
    this.config = exploreConfig(this.trustProxy);
    this.cores = options.seed % 4 === 3 ? 4 : 2;
    this.gate = loginGateLimits(this.cores);
    this.ids = new Prng(options.seed, 2);
    this.jitter = new Prng(options.seed, 3);
    this.backends = createSimBackends(this.runtime, { cacheTtlMs: CACHE_TTL_MS, logger: this.busLogger(), seed: options.seed });
    // Half the seeds run the fleet on a shared rate-limit store (RATE_LIMIT_STORE=redis, rule
    // LIMIT-rate-store): one bucket per client for every replica, on the cache's Redis, so the cache's
    // faults are its faults; the other half on each process's own buckets.
    this.shared = options.seed % 2 === 0 ? this.sharedStore() : undefined;
  }

  protected sharedStore(): RateLimitStore {
    const now = (): number => this.runtime.nowMs();
    const bucket = new TokenBucketLimiter(RATE_PER_SECOND, RATE_BURST, now);
    const trouble = this.backends.cache.trouble;
    return {
      take: async (key: string): Promise<RateLimitDecision> => {
        if (trouble.delayMs > SHARED_STORE_TIMEOUT_MS) {
          await this.runtime.sleep(SHARED_STORE_TIMEOUT_MS);
          throw new Error('rate limit store: command timed out');
        }
        await trouble.check('rate limit');
        const decision = bucket.take(key);
        this.decisions.set(decision, 'shared');
        return decision;
      },
    };
  }

  async start(): Promise<void> {
    Math.random = () => this.jitter.next() / 0x1_0000_0000;
    // Four seeds in five watch the limiter's diagnostics channel (it publishes only to a listener).
    if (this.options.seed % 5 !== 4) subscribe(RATE_LIMIT_CHANNEL, this.onDecision);
    for (let u = 0; u < this.options.users; u++) {
      const client: Client = {
        index: u,
        userId: this.ids.uuid(),
        username: `user${u}`,
        password: `password-${u}`,
        ...addressOf(u),
        token: undefined,
        tokenIat: 0,
        stale: true,
        requests: [],
        known: [],
      };
      this.clients.push(client);
      await this.backends.store.add({ id: client.userId, username: client.username, passwordHash: await cheapHash(client.password) });
    }
    for (const legacy of LEGACY)
      await this.backends.store.add({ id: this.ids.uuid(), username: legacy.username, passwordHash: legacy.hash });
    for (let r = 0; r < this.options.replicas; r++) this.replicas.push(this.newReplica(r, 0));
    await this.runtime.settle();
  }

  note(line: string): void {
    this.trace.push(line);
    this.hash.update(line);
    this.hash.update('\n');
  }

  digest(): string {
    return this.hash.copy().digest('hex').slice(0, 16);
  }

  async dispose(): Promise<void> {
    for (const replica of this.replicas) if (replica.alive) replica.kill();
    await this.runtime.settle();
    Math.random = this.random;
    if (this.options.seed % 5 !== 4) unsubscribe(RATE_LIMIT_CHANNEL, this.onDecision);
  }

  protected busLogger() {
    const ignore = (): void => undefined;
    return { debug: ignore, info: ignore, warn: ignore, error: ignore };
  }

  protected newReplica(index: number, incarnation: number): Replica {
    this.flushed.add(`${index}.${incarnation}`);
    const replica = new Replica({
      onUnacknowledged: () => undefined,
      index,
      incarnation,
      config: this.config,
      runtime: this.runtime,
      backends: this.backends,
      lines: this.lines,
      newId: () => this.ids.uuid(),
      onCommitted: (order, eventId) => this.onCommitted(order, eventId),
      variant: this.options.variant,
      sharedLimiter: this.shared,
      cores: this.cores,
      // Odd seeds relay in batches of 16 (the product's 256 is more than a run makes): full rounds back to back.
      relayBatch: this.options.seed % 2 === 1 ? 16 : undefined,
      decisions: this.decisions,
    });
    this.incarnations.push(replica);
    return replica;
  }

  /**
   * EXPLORE-key-once at the moment of commit: a key alive then in the model never makes a second order
   * (judged at commit time: an attempt that started before its key expired may commit after the relay's
   * housekeeping purged it, and then makes a new order, as IDEM-expiry allows).
   */
  protected onCommitted(order: Order, eventId: string): void {
    this.committed.set(order.id, { order, eventId });
    this.byEvent.set(eventId, order);
    const request = this.requestOf(order);
    if (request?.key === undefined) return;
    const id = `${request.user}/${request.key}`;
    const at = this.runtime.nowMs();
    const claim = this.claims.get(id);
    this.checks.hold(
      claim === undefined || claim.expiresAt <= at,
      INVARIANTS.keyOnce,
      () =>
        `key ${request.key} of user${request.user} made order ${order.id} while its claim on ${claim?.orderId} lives until ${claim?.expiresAt}`,
    );
    this.claims.set(id, {
      orderId: order.id,
      item: order.item,
      quantity: order.quantity,
      expiresAt: order.createdAt.getTime() + IDEMPOTENCY_KEY_TTL_MS,
    });
  }

  protected requestOf(order: Order): CreateRequest | undefined {
    return this.byBody.get(
      bodyKey(
        this.clients.findIndex((c) => c.userId === order.userId),
        order.item,
        order.quantity,
      ),
    );
  }

  protected register(request: CreateRequest): CreateRequest {
    this.requests.push(request);
    this.byBody.set(bodyKey(request.user, request.item, request.quantity), request);
    this.client(request.user).requests.push(request);
    return request;
  }

  protected newRequest(user: number, quantity: number, keyed: boolean): CreateRequest {
    const client = this.client(user);
    const id = this.requests.length;
    return this.register({ id, user: client.index, item: `item-${id}`, quantity, key: keyed ? `key-${id}` : undefined, attempts: [] });
  }

  protected forgetSessions(replica: Replica): void {
    for (const key of [...this.sessions.keys()]) if (key.startsWith(`${replica.index}.${replica.incarnation}.`)) this.sessions.delete(key);
  }

  /** Time moves `ms`: timer by timer when short, in pieces when long (each piece fires what fell due in it). */
  protected async advance(ms: number): Promise<void> {
    if (ms <= 0) return;
    if (ms <= FINE_ADVANCE_MS) {
      await this.runtime.runUntil(() => false, this.runtime.nowMs() + ms);
      return;
    }
    // The last stretch timer by timer, so what was in flight sees the moment it waited for.
    const fine = 200;
    const pieces = Math.min(8, Math.ceil(ms / 60_000) + 1);
    const coarse = ms - fine;
    for (let i = 0; i < pieces; i++) await this.runtime.jump(Math.floor(coarse / pieces) + (i === pieces - 1 ? coarse % pieces : 0));
    await this.runtime.runUntil(() => false, this.runtime.nowMs() + fine);
  }

  protected async advanceTo(at: number): Promise<void> {
    await this.advance(at - this.runtime.nowMs());
  }

  protected client(index: number): Client {
    return this.clients[index % this.clients.length] as Client;
  }

  protected live(index: number): Replica | undefined {
    const replica = this.replicas[index % this.replicas.length] as Replica;
    return replica.alive ? replica : undefined;
  }

  protected sessionKey(replica: Replica, client: Client): string {
    return `${replica.index}.${replica.incarnation}.${client.index}`;
  }

  /** Runs `work` in the simulation until it settles or `timeoutMs` of simulated time pass (it goes on in flight). */
  protected async await<T>(work: Promise<T>, timeoutMs: number): Promise<T | undefined> {
    let done = false;
    let value: T | undefined;
    let failure: unknown;
    const flight = work.then(
      (v) => void (value = v),
      (e: unknown) => void (failure = e),
    );
    const tracked = flight.finally(() => {
      done = true;
      this.flights.delete(tracked);
    });
    this.flights.add(tracked);
    await this.runtime.runUntil(() => done, this.runtime.nowMs() + timeoutMs);
    if (failure !== undefined) throw failure;
    return value;
  }

  /** EXPLORE-login-gate: logins wait in a gate's queue only for callers still there (an abandoned one leaves at once). */
  protected checkGates(): void {
    for (const replica of this.replicas) {
      if (!replica.alive) continue;
      const waiting = replica.gate.load.waiting;
      const live = this.liveLogins.get(`${replica.index}.${replica.incarnation}`) ?? 0;
      this.checks.hold(
        waiting <= live,
        INVARIANTS.loginGate,
        () => `replica ${replica.index}'s login gate holds ${waiting} waiting logins, only ${live} callers are still there`,
      );
    }
  }

  /** Notes when the database was last troubled: a backlog sample may be stale for a while after. */
  protected trackDatabase(): void {
    const trouble = this.backends.store.trouble;
    if (trouble.isDown || trouble.delayMs > 0 || trouble.queuedFailures > 0) this.dbCalmSince = this.runtime.nowMs();
  }
}

/** A create's body as IDEM-mismatch compares it (item and quantity), per user: which request an order answers. */
export function bodyKey(user: number, item: string, quantity: number): string {
  return `${user}\u0000${item}\u0000${quantity}`;
}
