import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { SignJWT } from 'jose';
import { loadServiceConfig, type ServiceConfig } from '../src/config/service.ts';
import type { Order } from '../src/domain/order.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import { authenticate } from '../src/service/authenticate.ts';
import type { SessionKey } from '../src/domain/session-key.ts';
import { RATE_LIMIT_CHANNEL, setRateLimitHeaders, type RateLimitEvent } from '../src/rate-limit/limiter.ts';
import type { RateLimitDecision, RateLimitStore } from '../src/rate-limit/store.ts';
import { TokenBucketLimiter } from '../src/rate-limit/store.ts';
import { mapError, type ErrorKind } from '../src/transports/errors/table.ts';
import type { RestRequest } from '../src/transports/http/rest/api.ts';
import { Checks, INVARIANTS, Violation } from './invariants.ts';
import { expectedPage, orderDto, sameDto, newerFirst, type OrderDto } from './oracle.ts';
import { Prng } from './prng.ts';
import { Replica, type DecisionSource, type LogLine, type Variant } from './replica.ts';
import { createSimBackends, troubleOf, type SimBackends, type SimTarget } from './sim-fakes.ts';
import { SimRuntime } from './sim-runtime.ts';
import {
  CACHE_TTL_MS,
  EXPLORE_ENV,
  IDEMPOTENCY_KEY_TTL_MS,
  loginGateLimits,
  MESSAGES,
  NEAR_CACHE_TTL_MS,
  RATE_BURST,
  RATE_PER_SECOND,
  RELAY,
  SESSION_LINGER_MS,
  SESSION_RECENT,
  TOKEN_LIFETIME_MS,
  TRUST_PROXY,
} from './spec-constants.ts';
import { describeStep, type Forgery, type LoginAs, type Route, type SpreadAction, type Step, type Window } from './workload.ts';

/** How long a client waits for an answer before it calls the request ambiguous (and may retry). */
export const CLIENT_TIMEOUT_MS = 1_000;
/** Advances up to this long go timer by timer; longer ones in pieces (a 50 ms relay poll over a day is 1.7 M timers). */
const FINE_ADVANCE_MS = 3_000;
/** The balancer in front of the fleet (TRUST_PROXY in EXPLORE_ENV). */
const PROXY = '10.9.0.1';
/** An address a client writes into X-Forwarded-For to pick its own bucket: never believed. */
const SPOOFED = '203.0.113.7';
/** The reason a request's signal ends with when its answer is sent (as a transport's response closes). */
const REQUEST_ENDED = new Error('request ended');
const CLIENT_GONE = new Error('client went away');
/** The shared store's command bound (src/adapters/redis/rate-limit-store.ts's default): a slower Redis is an outage to the limiter. */
const SHARED_STORE_TIMEOUT_MS = 250;

export interface RunOptions {
  readonly seed: number;
  readonly replicas: number;
  readonly users: number;
  readonly variant?: Variant | undefined;
}

export interface RunResult {
  readonly digest: string;
  readonly checks: number;
  readonly violation: Violation | undefined;
  readonly trace: readonly string[];
}

type Status = number | 'timeout' | 'refused' | 'gone';
interface Answer {
  readonly status: number | 'refused' | 'gone';
  readonly body: unknown;
  readonly kind?: ErrorKind;
  /** Refused by the rate limiter. */
  readonly limited?: boolean;
  /** When the rate limiter let it through: what the service's clock read when it started the work. */
  readonly admittedAt?: number;
}

type Operation = 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent';
interface Outgoing {
  body?: string;
  params?: Record<string, string>;
  query?: URLSearchParams;
  headers?: Record<string, string>;
}

interface Attempt {
  readonly at: number;
  status: Status | undefined;
  orderId: string | undefined;
}
interface CreateRequest {
  readonly id: number;
  readonly user: number;
  readonly item: string;
  readonly quantity: number;
  readonly key: string | undefined;
  readonly attempts: Attempt[];
}

interface Client {
  readonly index: number;
  readonly userId: string;
  readonly username: string;
  readonly password: string;
  /** The TCP peer address when it connects directly, as the socket reports it. */
  readonly address: string;
  /** The address the rate limiter must key it on (rule LIMIT-rate-keying), as the explorer reads the rule. */
  readonly limitKey: string;
  token: string | undefined;
  tokenIat: number;
  /** A protected request was answered 401: the client logs in again before its next one (as clients refresh). */
  stale: boolean;
  readonly requests: CreateRequest[];
  /** Orders this client has seen answered (201, a list page): what it may ask for later. */
  readonly known: string[];
}

/** What the explorer believes one user's session on one replica process holds (spec 2.2, 3.2). */
interface SessionModel {
  recent: string[];
  views: number;
  lastUse: number;
}

/** A key's claim as the explorer models it (IDEM-replay, IDEM-expiry): the order it made, until when. */
interface KeyClaim {
  readonly orderId: string;
  readonly item: string;
  readonly quantity: number;
  readonly expiresAt: number;
}

const PASSWORD_COST = { N: 16, r: 1, p: 1 } as const;
const hashes = new Map<string, Promise<string>>();
/** Users' hashes at a tiny scrypt cost, made once per process (verifyPassword reads the cost from the hash). */
function cheapHash(password: string): Promise<string> {
  let hash = hashes.get(password);
  if (hash === undefined) {
    hash = hashPassword(password, PASSWORD_COST);
    hashes.set(password, hash);
  }
  return hash;
}
/** A user migrated from an old system whose stored hash this service cannot read: its logins fail, never crash. */
const LEGACY_PASSWORD = 'legacy-password';
const LEGACY = [
  { username: 'legacy-md5', hash: 'md5$5f4dcc3b5aa765d61d8327deb882cf99' },
  { username: 'legacy-short', hash: 'scrypt$16$1$1$c2FsdHNhbHRzYWx0$c2hvcnQ' },
  // A cost scrypt refuses (N not a power of two): still a hash that does not match.
  { username: 'legacy-cost', hash: `scrypt$3$1$1$c2FsdHNhbHRzYWx0$${Buffer.alloc(32, 7).toString('base64url')}` },
] as const;

const configs = new Map<boolean, ServiceConfig>();
/** The fleet's configuration: with or without TRUST_PROXY (loaded once per process each). */
function exploreConfig(trustProxy: boolean): ServiceConfig {
  let config = configs.get(trustProxy);
  if (config === undefined) {
    config = loadServiceConfig({ ...EXPLORE_ENV, ...(trustProxy ? { TRUST_PROXY } : {}) }, { embedded: true });
    configs.set(trustProxy, config);
  }
  return config;
}

/** Client addresses: IPv4, IPv4-mapped IPv6 (keyed as IPv4) and IPv6 (keyed in lower case). */
function addressOf(user: number): { address: string; limitKey: string } {
  if (user % 3 === 1) return { address: `::ffff:10.0.0.${user + 1}`, limitKey: `10.0.0.${user + 1}` };
  if (user % 3 === 2) return { address: `2001:DB8::${user + 1}`, limitKey: `2001:db8::${user + 1}` };
  return { address: `10.0.0.${user + 1}`, limitKey: `10.0.0.${user + 1}` };
}

/** One seed: a fleet, a schedule, the checks. Deterministic: the same steps give the same trace. */
export async function runSchedule(steps: readonly Step[], options: RunOptions): Promise<RunResult> {
  const world = new World(options);
  await world.start();
  try {
    for (let i = 0; i < steps.length; i++) {
      try {
        await world.step(i, steps[i] as Step);
      } catch (error) {
        if (error instanceof Violation) error.step ??= i;
        throw error;
      }
    }
    await world.finish();
    return { digest: world.digest(), checks: world.checks.count, violation: undefined, trace: world.trace };
  } catch (error) {
    if (!(error instanceof Violation)) throw error;
    world.note(`violation ${error.message}`);
    return { digest: world.digest(), checks: world.checks.count, violation: error, trace: world.trace };
  } finally {
    await world.dispose();
  }
}

class World {
  readonly checks = new Checks();
  readonly trace: string[] = [];
  readonly #hash = createHash('sha256');
  readonly #options: RunOptions;
  readonly #runtime = new SimRuntime();
  readonly #ids: Prng;
  /** The relay's backoff jitter draws Math.random: during a run it draws from the seed. */
  readonly #jitter: Prng;
  readonly #random = Math.random;
  readonly #config: ServiceConfig;
  /** Whether the balancer is trusted (TRUST_PROXY set), and the machine size the replicas' login gates are made for. */
  readonly #trustProxy: boolean;
  readonly #gate: ReturnType<typeof loginGateLimits>;
  readonly #cores: number;
  readonly #lines: LogLine[] = [];
  readonly #backends: SimBackends;
  readonly #replicas: Replica[] = [];
  readonly #clients: Client[] = [];
  readonly #requests: CreateRequest[] = [];
  /** Each create request by its body and user (a reuse of a key with a body sent before is that request again). */
  readonly #byBody = new Map<string, CreateRequest>();
  /** Committed orders by their event's id. */
  readonly #byEvent = new Map<string, Order>();
  /** Every order the database committed, with its event id: the ground truth of the checks. */
  readonly #committed = new Map<string, { order: Order; eventId: string }>();
  /** What a 201 carried, by order id (also 201s that came after the client gave up). */
  readonly #answered = new Map<string, OrderDto>();
  /** Per replica incarnation and user: the orders viewed there, and the views made. */
  readonly #views = new Map<string, Set<string>>();
  readonly #viewCounts = new Map<string, number>();
  /** Per replica incarnation and user: the session the explorer expects (deleted with the process). */
  readonly #sessions = new Map<string, SessionModel>();
  /** Incarnations stopped gracefully (their sessions flushed) or still running at the end. */
  readonly #flushed = new Set<string>();
  /** Admissions per decision store and client key: `local` per replica process, `shared` per fleet. */
  readonly #admitted = new Map<string, { first: number; count: number }>();
  readonly #decisions = new WeakMap<RateLimitDecision, DecisionSource>();
  /** What the limiter published on its diagnostics channel for each decision (its key and source). */
  readonly #announcedDecisions = new WeakMap<RateLimitDecision, RateLimitEvent>();
  readonly #onDecision = (message: unknown): void => {
    const event = message as RateLimitEvent;
    this.#announcedDecisions.set(event.decision, event);
  };
  /** Per replica incarnation and client key: the last admission (the rate window's anchor). */
  readonly #lastAdmission = new Map<string, number>();
  /** Events a replica held when it was killed: they may be announced twice (EXPLORE-announced). */
  readonly #diedHolding = new Set<string>();
  readonly #flights = new Set<Promise<void>>();
  /** Every replica incarnation of the run, dead ones too (a dead one may still hold a delivery). */
  readonly #incarnations: Replica[] = [];
  /** The model of Idempotency-Keys: per user and key, the claim the database holds. */
  readonly #claims = new Map<string, KeyClaim>();
  /** Per user and key: attempts in flight (their outcome is open, so an answer may go either way). */
  readonly #keyFlights = new Map<string, number>();
  readonly #keySends = new Map<string, number>();
  /** Per replica incarnation and user: requests in flight (a session read races them). */
  readonly #userFlights = new Map<string, number>();
  /** Per replica incarnation: logins past the limiter whose client has not gone away, not yet answered. */
  readonly #liveLogins = new Map<string, number>();
  /** Since when the database has been calm (no outage, no latency, no failure queued). */
  #dbCalmSince = 0;
  /** Changes each time the database goes into trouble (down, fail-next): a 500 needs one. */
  #dbTroubleEpoch = 0;
  readonly #shared: RateLimitStore | undefined;

  constructor(options: RunOptions) {
    this.#options = options;
    this.#trustProxy = options.seed % 3 !== 0;
    this.#config = exploreConfig(this.#trustProxy);
    this.#cores = options.seed % 4 === 3 ? 4 : 2;
    this.#gate = loginGateLimits(this.#cores);
    this.#ids = new Prng(options.seed, 2);
    this.#jitter = new Prng(options.seed, 3);
    this.#backends = createSimBackends(this.#runtime, { cacheTtlMs: CACHE_TTL_MS, logger: this.#busLogger(), seed: options.seed });
    // Half the seeds run the fleet on a shared rate-limit store (RATE_LIMIT_STORE=redis, rule
    // LIMIT-rate-store): one bucket per client for every replica, on the cache's Redis, so the cache's
    // faults are its faults; the other half on each process's own buckets.
    this.#shared = options.seed % 2 === 0 ? this.#sharedStore() : undefined;
  }

  #sharedStore(): RateLimitStore {
    const now = (): number => this.#runtime.nowMs();
    const bucket = new TokenBucketLimiter(RATE_PER_SECOND, RATE_BURST, now);
    const trouble = this.#backends.cache.trouble;
    return {
      take: async (key: string): Promise<RateLimitDecision> => {
        if (trouble.delayMs > SHARED_STORE_TIMEOUT_MS) {
          await this.#runtime.sleep(SHARED_STORE_TIMEOUT_MS);
          throw new Error('rate limit store: command timed out');
        }
        await trouble.check('rate limit');
        const decision = bucket.take(key);
        this.#decisions.set(decision, 'shared');
        return decision;
      },
    };
  }

  async start(): Promise<void> {
    Math.random = () => this.#jitter.next() / 0x1_0000_0000;
    // Four seeds in five watch the limiter's diagnostics channel (it publishes only to a listener).
    if (this.#options.seed % 5 !== 4) subscribe(RATE_LIMIT_CHANNEL, this.#onDecision);
    for (let u = 0; u < this.#options.users; u++) {
      const client: Client = {
        index: u,
        userId: this.#ids.uuid(),
        username: `user${u}`,
        password: `password-${u}`,
        ...addressOf(u),
        token: undefined,
        tokenIat: 0,
        stale: true,
        requests: [],
        known: [],
      };
      this.#clients.push(client);
      await this.#backends.store.add({ id: client.userId, username: client.username, passwordHash: await cheapHash(client.password) });
    }
    for (const legacy of LEGACY)
      await this.#backends.store.add({ id: this.#ids.uuid(), username: legacy.username, passwordHash: legacy.hash });
    for (let r = 0; r < this.#options.replicas; r++) this.#replicas.push(this.#newReplica(r, 0));
    await this.#runtime.settle();
  }

  note(line: string): void {
    this.trace.push(line);
    this.#hash.update(line);
    this.#hash.update('\n');
  }

  digest(): string {
    return this.#hash.copy().digest('hex').slice(0, 16);
  }

  async dispose(): Promise<void> {
    for (const replica of this.#replicas) if (replica.alive) replica.kill();
    await this.#runtime.settle();
    Math.random = this.#random;
    if (this.#options.seed % 5 !== 4) unsubscribe(RATE_LIMIT_CHANNEL, this.#onDecision);
  }

  #busLogger() {
    const ignore = (): void => undefined;
    return { debug: ignore, info: ignore, warn: ignore, error: ignore };
  }

  #newReplica(index: number, incarnation: number): Replica {
    this.#flushed.add(`${index}.${incarnation}`);
    const replica = new Replica({
      onUnacknowledged: () => undefined,
      index,
      incarnation,
      config: this.#config,
      runtime: this.#runtime,
      backends: this.#backends,
      lines: this.#lines,
      newId: () => this.#ids.uuid(),
      onCommitted: (order, eventId) => this.#onCommitted(order, eventId),
      variant: this.#options.variant,
      sharedLimiter: this.#shared,
      cores: this.#cores,
      // Odd seeds relay in batches of 16 (the product's 256 is more than a run makes): full rounds back to back.
      relayBatch: this.#options.seed % 2 === 1 ? 16 : undefined,
      decisions: this.#decisions,
    });
    this.#incarnations.push(replica);
    return replica;
  }

  /**
   * EXPLORE-key-once at the moment of commit: a key alive then in the model never makes a second order
   * (judged at commit time: an attempt that started before its key expired may commit after the relay's
   * housekeeping purged it, and then makes a new order, as IDEM-expiry allows).
   */
  #onCommitted(order: Order, eventId: string): void {
    this.#committed.set(order.id, { order, eventId });
    this.#byEvent.set(eventId, order);
    const request = this.#requestOf(order);
    if (request?.key === undefined) return;
    const id = `${request.user}/${request.key}`;
    const at = this.#runtime.nowMs();
    const claim = this.#claims.get(id);
    this.checks.hold(
      claim === undefined || claim.expiresAt <= at,
      INVARIANTS.keyOnce,
      () =>
        `key ${request.key} of user${request.user} made order ${order.id} while its claim on ${claim?.orderId} lives until ${claim?.expiresAt}`,
    );
    this.#claims.set(id, {
      orderId: order.id,
      item: order.item,
      quantity: order.quantity,
      expiresAt: order.createdAt.getTime() + IDEMPOTENCY_KEY_TTL_MS,
    });
  }

  #requestOf(order: Order): CreateRequest | undefined {
    return this.#byBody.get(
      bodyKey(
        this.#clients.findIndex((c) => c.userId === order.userId),
        order.item,
        order.quantity,
      ),
    );
  }

  #register(request: CreateRequest): CreateRequest {
    this.#requests.push(request);
    this.#byBody.set(bodyKey(request.user, request.item, request.quantity), request);
    this.#client(request.user).requests.push(request);
    return request;
  }

  // ------------------------------------------------------------------ steps

  async step(index: number, step: Step): Promise<void> {
    // EXPLORE_DEBUG=1: each step as it starts, on stderr (a stalled run prints no trace, cli.ts says which seed).
    if (process.env['EXPLORE_DEBUG'] !== undefined) console.error(`step ${index} t=${this.#runtime.time.offsetMs} ${describeStep(step)}`);
    const outcome = await this.#execute(step);
    this.#checkGates();
    this.#trackDatabase();
    this.note(`${index} t=${this.#runtime.time.offsetMs} ${describeStep(step)} -> ${outcome}`);
  }

  async #execute(step: Step): Promise<string> {
    // A client without a live token logs in first (on 401 it refreshes), except to probe a token's expiry.
    const refresh = ['create', 'create-many', 'retry', 'reuse', 'get', 'list', 'recent', 'burst', 'spread', 'boundary', 'abandon'];
    if (
      refresh.includes(step.op) &&
      'user' in step &&
      !(step.op === 'boundary' && step.window === 'token') &&
      !(step.op === 'abandon' && step.what === 'login')
    ) {
      const client = this.#client(step.user);
      if (client.stale || client.token === undefined) await this.#login(step.user, step.replica, 'right');
    }
    switch (step.op) {
      case 'login':
        return this.#login(step.user, step.replica, step.as, step.route);
      case 'login-burst':
        return this.#loginBurst(step.user, step.replica, step.count);
      case 'login-storm':
        return this.#loginStorm(step.replica, step.perClient);
      case 'abandon':
        return this.#abandon(step);
      case 'create': {
        const request = this.#newRequest(step.user, step.quantity, step.keyed);
        const outcomes = [await this.#sendCreate(request, step.replica, { twice: step.twice })];
        // The client's retry policy: the same request (and key) again, on the next replica, at once.
        for (let retry = 1; retry <= step.retries && /^(timeout|refused|500)/.test(outcomes[outcomes.length - 1] as string); retry++) {
          outcomes.push(await this.#sendCreate(request, step.replica + retry));
        }
        return outcomes.join(' / ');
      }
      case 'create-many': {
        const outcomes: string[] = [];
        // A batch import paced at the rate limit: one create per token refill.
        for (let i = 0; i < step.count; i++) {
          if (i > 0) await this.#advance(1_000 / RATE_PER_SECOND);
          outcomes.push(await this.#sendCreate(this.#newRequest(step.user, 1 + (i % 9), false), step.replica));
        }
        return outcomes.map((o) => o.split(' ')[0]).join(',');
      }
      case 'retry':
        return this.#retry(step.user, step.replica);
      case 'reuse':
        return this.#reuse(step.user, step.replica, step.change);
      case 'get':
        return this.#get(step.user, step.replica, step.target, step.pick, step.route);
      case 'list':
        return this.#list(step.user, step.replica, step.limit, step.offset);
      case 'recent':
        return this.#recent(step.user, step.replica);
      case 'burst': {
        const statuses: string[] = [];
        for (let i = 0; i < step.count; i++)
          statuses.push((await this.#get(step.user, step.replica, 'own', i, step.route)).split(' ')[0] as string);
        return statuses.join(',');
      }
      case 'forged':
        return this.#forged(step.user, step.replica, step.kind);
      case 'spread':
        return this.#spread(step.user, step.replica, step.gaps, step.actions);
      case 'wait':
        await this.#advance(step.ms);
        return 'ok';
      case 'boundary':
        return this.#boundary(step.window, step.user, step.replica, step.deltaMs);
      case 'fault': {
        const trouble = troubleOf(this.#backends, step.target);
        if (step.mode === 'down') trouble.down();
        else if (step.mode === 'slow') trouble.slow(step.amount);
        else trouble.failNext(step.amount);
        if (step.target === 'database' && step.mode !== 'slow') this.#dbTroubleEpoch += 1;
        return 'ok';
      }
      case 'heal':
        troubleOf(this.#backends, step.target).reset();
        return 'ok';
      case 'lost-ack': {
        const replica = this.#live(step.replica);
        if (replica === undefined) return 'down';
        replica.lostAcks += 1;
        return 'ok';
      }
      case 'kill': {
        const replica = this.#live(step.replica);
        if (replica === undefined) return 'down';
        for (const id of replica.kill()) this.#diedHolding.add(id);
        this.#flushed.delete(`${replica.index}.${replica.incarnation}`);
        this.#forgetSessions(replica);
        await this.#runtime.settle();
        return 'killed';
      }
      case 'stop':
        return this.#stop(step.replica);
      case 'restart': {
        const current = this.#replicas[step.replica] as Replica;
        if (current.alive) return 'up';
        this.#replicas[step.replica] = this.#newReplica(step.replica, current.incarnation + 1);
        await this.#runtime.settle();
        return `incarnation ${current.incarnation + 1}`;
      }
      case 'jump':
        await this.#runtime.jump(step.ms);
        return 'ok';
      case 'health':
        return this.#health(step.replica, false);
      case 'scan':
        return this.#scan(step.replica, step.count);
    }
  }

  #newRequest(user: number, quantity: number, keyed: boolean): CreateRequest {
    const client = this.#client(user);
    const id = this.#requests.length;
    return this.#register({ id, user: client.index, item: `item-${id}`, quantity, key: keyed ? `key-${id}` : undefined, attempts: [] });
  }

  /** The user's latest create sent again as it was (after an ambiguous answer, or just again). */
  async #retry(user: number, replica: number): Promise<string> {
    const client = this.#client(user);
    const last = client.requests[client.requests.length - 1];
    if (last === undefined) return 'nothing to retry';
    const status = last.attempts[last.attempts.length - 1]?.status;
    if (last.key === undefined && (status === 201 || status === 400)) return 'nothing to retry';
    return this.#sendCreate(last, replica);
  }

  /** IDEM-mismatch: the key of the user's latest keyed create with another body (or the same one). */
  async #reuse(user: number, replica: number, change: 'item' | 'quantity' | 'none'): Promise<string> {
    const client = this.#client(user);
    const keyed = client.requests.filter((r) => r.key !== undefined);
    const original = keyed[keyed.length - 1];
    if (original === undefined) return 'no key to reuse';
    if (change === 'none') return this.#sendCreate(original, replica);
    const id = this.#requests.length;
    const item = change === 'item' ? `item-${id}` : original.item;
    const quantity = change === 'quantity' ? (original.quantity % 9) + 1 : original.quantity;
    // The same body with the same key sent before is that request again (a retry), not another one.
    const known = this.#byBody.get(bodyKey(client.index, item, quantity));
    const request =
      known !== undefined && known.key === original.key
        ? known
        : this.#register({ id, user: client.index, item, quantity, key: original.key, attempts: [] });
    return this.#sendCreate(request, replica);
  }

  async #stop(index: number): Promise<string> {
    const replica = this.#live(index);
    if (replica === undefined) return 'down';
    let stopped = false;
    await this.#await(
      replica.stop().then(() => void (stopped = true)),
      10 * 60_000,
    );
    this.#forgetSessions(replica);
    return stopped ? 'stopped' : 'stopping';
  }

  #forgetSessions(replica: Replica): void {
    for (const key of [...this.#sessions.keys()])
      if (key.startsWith(`${replica.index}.${replica.incarnation}.`)) this.#sessions.delete(key);
  }

  // ------------------------------------------------------------------ time

  /** Time moves `ms`: timer by timer when short, in pieces when long (each piece fires what fell due in it). */
  async #advance(ms: number): Promise<void> {
    if (ms <= 0) return;
    if (ms <= FINE_ADVANCE_MS) {
      await this.#runtime.runUntil(() => false, this.#runtime.nowMs() + ms);
      return;
    }
    // The last stretch timer by timer, so what was in flight sees the moment it waited for.
    const fine = 200;
    const pieces = Math.min(8, Math.ceil(ms / 60_000) + 1);
    const coarse = ms - fine;
    for (let i = 0; i < pieces; i++) await this.#runtime.jump(Math.floor(coarse / pieces) + (i === pieces - 1 ? coarse % pieces : 0));
    await this.#runtime.runUntil(() => false, this.#runtime.nowMs() + fine);
  }

  async #advanceTo(at: number): Promise<void> {
    await this.#advance(at - this.#runtime.nowMs());
  }

  /** Requests of one user inside a window: before each, time moves its gap (in pieces). */
  async #spread(user: number, replica: number, gaps: readonly number[], actions: readonly SpreadAction[]): Promise<string> {
    const outcomes: string[] = [];
    for (let i = 0; i < gaps.length; i++) {
      await this.#advance(gaps[i] as number);
      outcomes.push(await this.#act(actions[i] as SpreadAction, user, replica, i));
    }
    return outcomes.join(' / ');
  }

  async #act(action: SpreadAction, user: number, replica: number, pick: number): Promise<string> {
    switch (action) {
      case 'get':
        return this.#get(user, replica, 'own', pick, 'direct');
      case 'recent':
        return this.#recent(user, replica);
      case 'list':
        return this.#list(user, replica, null, null);
      case 'retry':
        return this.#retry(user, replica);
      case 'reuse':
        return this.#reuse(user, replica, 'quantity');
    }
  }

  /**
   * Time moves to `deltaMs` from where a window of `user` ends (a session's linger, a token's expiry, a
   * key's lifetime, a cached order's TTL, the rate bucket's next token), and the request that window
   * decides is sent there: just before, on, or just after the boundary.
   */
  async #boundary(window: Window, user: number, replicaIndex: number, deltaMs: number): Promise<string> {
    const client = this.#client(user);
    const replica = this.#replicas[replicaIndex % this.#replicas.length] as Replica;
    const latest = [...this.#committed.values()].filter((c) => c.order.userId === client.userId).at(-1);
    let end: number | undefined;
    switch (window) {
      case 'linger':
        end = this.#sessions.get(this.#sessionKey(replica, client))?.lastUse;
        if (end !== undefined) end += SESSION_LINGER_MS;
        break;
      case 'token':
        end = client.token === undefined ? undefined : (client.tokenIat + TOKEN_LIFETIME_MS / 1_000) * 1_000;
        break;
      case 'key': {
        const keyed = client.requests.filter((r) => r.key !== undefined).at(-1);
        end = keyed === undefined ? undefined : this.#claims.get(`${user % this.#clients.length}/${keyed.key}`)?.expiresAt;
        break;
      }
      case 'cache':
      case 'near-cache':
        end = latest === undefined ? undefined : latest.order.createdAt.getTime() + (window === 'cache' ? CACHE_TTL_MS : NEAR_CACHE_TTL_MS);
        break;
      case 'rate':
        end = this.#lastAdmission.get(`${replica.index}.${replica.incarnation}.${client.limitKey}`);
        if (end !== undefined) end += 1_000 / RATE_PER_SECOND;
        break;
    }
    if (end === undefined) return 'no such window';
    const at = end + deltaMs;
    const moved = at > this.#runtime.nowMs();
    if (moved) await this.#advanceTo(at);
    let outcome: string;
    switch (window) {
      case 'linger':
        outcome = await this.#recent(user, replicaIndex);
        break;
      case 'token':
        outcome = await this.#list(user, replicaIndex, null, null);
        break;
      case 'key':
        outcome = await this.#reuse(user, replicaIndex, 'quantity');
        break;
      case 'cache':
      case 'near-cache':
        outcome = latest === undefined ? 'none' : await this.#getById(client, replicaIndex, latest.order.id, 'own', 'direct');
        break;
      case 'rate': {
        const statuses: string[] = [];
        for (let i = 0; i <= RATE_BURST; i++) statuses.push((await this.#list(user, replicaIndex, '1', null)).split(' ')[0] as string);
        outcome = statuses.join(',');
        break;
      }
    }
    return `${moved ? 'at' : 'passed'} ${deltaMs}: ${outcome}`;
  }

  // ------------------------------------------------------------------ requests

  #client(index: number): Client {
    return this.#clients[index % this.#clients.length] as Client;
  }

  #live(index: number): Replica | undefined {
    const replica = this.#replicas[index % this.#replicas.length] as Replica;
    return replica.alive ? replica : undefined;
  }

  #sessionKey(replica: Replica, client: Client): string {
    return `${replica.index}.${replica.incarnation}.${client.index}`;
  }

  /** Runs `work` in the simulation until it settles or `timeoutMs` of simulated time pass (it goes on in flight). */
  async #await<T>(work: Promise<T>, timeoutMs: number): Promise<T | undefined> {
    let done = false;
    let value: T | undefined;
    let failure: unknown;
    const flight = work.then(
      (v) => void (value = v),
      (e: unknown) => void (failure = e),
    );
    const tracked = flight.finally(() => {
      done = true;
      this.#flights.delete(tracked);
    });
    this.#flights.add(tracked);
    await this.#runtime.runUntil(() => done, this.#runtime.nowMs() + timeoutMs);
    if (failure !== undefined) throw failure;
    return value;
  }

  /** Where a request comes from (rule LIMIT-rate-trust-proxy) and the key the limiter must give it. */
  #via(client: Client, route: Route): { peer: string | undefined; forwardedFor: string | string[] | undefined; key: string } {
    switch (route) {
      case 'direct':
        return { peer: client.address, forwardedFor: undefined, key: client.limitKey };
      case 'direct-spoof':
        return { peer: client.address, forwardedFor: SPOOFED, key: client.limitKey };
      case 'proxy':
        return { peer: PROXY, forwardedFor: client.address, key: this.#trustProxy ? client.limitKey : PROXY };
      case 'proxy-spoof':
        return { peer: `::ffff:${PROXY}`, forwardedFor: [SPOOFED, client.address], key: this.#trustProxy ? client.limitKey : PROXY };
      case 'proxy-garbled':
        // The rightmost entry, the balancer's own, is not an address: the walk ends at the balancer.
        return { peer: PROXY, forwardedFor: client.index % 2 === 0 ? `${client.address}, unknown` : `${client.address},`, key: PROXY };
      case 'socket-gone':
        // Rule LIMIT-rate-keying: a request whose peer is unknown shares the key `unknown`.
        return { peer: undefined, forwardedFor: undefined, key: 'unknown' };
    }
  }

  /**
   * One request as an HTTP transport runs it (CHAIN-order): the rate limiter, then for a protected route
   * `authenticate`, then the RestApi operation, errors mapped by the one error table. `then` sees the
   * answer whenever it comes (checks run then); the client waits CLIENT_TIMEOUT_MS for it.
   */
  async #send(
    replicaIndex: number,
    client: Client,
    operation: Operation,
    request: Outgoing,
    then: (answer: Answer, replica: Replica) => void,
    options: { route?: Route; abandonAfterMs?: number; settled?: () => void; twin?: number } = {},
  ): Promise<Status> {
    const replica = this.#live(replicaIndex);
    const twin = options.twin === undefined ? undefined : this.#live(options.twin);
    if (options.twin !== undefined && twin === undefined) options.settled?.();
    if (replica === undefined) {
      options.settled?.();
      return 'refused';
    }
    const token = client.token;
    const tokenIat = token === undefined ? undefined : client.tokenIat;
    const controller = new AbortController();
    let gone = false;
    if (options.abandonAfterMs !== undefined) {
      this.#runtime.time.setTimeout(() => {
        gone = true;
        controller.abort(CLIENT_GONE);
      }, options.abandonAfterMs);
    }
    // A double submit goes to a second replica at the same moment, under the same wait.
    const works = [replica, ...(twin === undefined ? [] : [twin])].map((target) => {
      const flightKey = `${target.index}.${target.incarnation}.${client.index}`;
      this.#userFlights.set(flightKey, (this.#userFlights.get(flightKey) ?? 0) + 1);
      return this.#handle(target, client, operation, request, token, this.#via(client, options.route ?? 'direct'), controller, () => gone)
        .then((answer) => {
          // A replica that died with the request in hand answers nothing; a client gone hears nothing.
          if (!target.alive) return 'refused' as const;
          if (answer.status === 'gone') return 'gone' as const;
          if (answer.status === 401 && operation !== 'login') client.stale = true;
          this.#checkAnswer(operation, answer, tokenIat);
          then(answer, target);
          return answer.status;
        })
        .finally(() => {
          this.#userFlights.set(flightKey, (this.#userFlights.get(flightKey) ?? 1) - 1);
          options.settled?.();
        });
    });
    const work = Promise.all(works).then((statuses) => statuses[0] as Status);
    let status: Status = 'timeout';
    await this.#await(
      work.then((s) => void (status = s)),
      CLIENT_TIMEOUT_MS,
    );
    return status;
  }

  async #handle(
    replica: Replica,
    client: Client,
    operation: Operation,
    request: Outgoing,
    token: string | undefined,
    via: { peer: string | undefined; forwardedFor: string | string[] | undefined; key: string },
    controller: AbortController = new AbortController(),
    gone: () => boolean = () => false,
  ): Promise<Answer> {
    const dbBefore = this.#dbTroubleEpoch;
    const dbTroubled = (): boolean =>
      this.#backends.store.trouble.isDown || this.#backends.store.trouble.queuedFailures > 0 || this.#dbTroubleEpoch !== dbBefore;
    const troubledAtStart = dbTroubled();
    const decision = await replica.limiter.take({ peer: via.peer, forwardedFor: via.forwardedFor });
    this.#checkHeaders(decision);
    if (!decision.allowed) return { status: 429, body: undefined, limited: true };
    this.#admit(replica, via.key, decision);
    const admittedAt = this.#runtime.nowMs();
    const req: RestRequest = {
      params: request.params ?? {},
      query: request.query ?? new URLSearchParams(),
      readBody: () => Promise.resolve(request.body ?? ''),
      client: via.key,
      signal: controller.signal,
      headers: request.headers ?? {},
    };
    const gate = `${replica.index}.${replica.incarnation}`;
    const login = operation === 'login';
    let counted = login;
    if (login) {
      this.#liveLogins.set(gate, (this.#liveLogins.get(gate) ?? 0) + 1);
      // A caller that goes away no longer counts: its wait must leave the gate's queue at once.
      controller.signal.addEventListener('abort', () => {
        if (counted && gone()) {
          counted = false;
          this.#liveLogins.set(gate, (this.#liveLogins.get(gate) ?? 1) - 1);
        }
      });
    }
    try {
      if (login) return { ...(await replica.api.login(req)), admittedAt };
      const principal = await authenticate(token === undefined ? undefined : `Bearer ${token}`, replica.tokens);
      const answer = await replica.api[operation](req, principal);
      // The service recorded a view in this user's session on this process (SESSION-view-on-get).
      if (operation === 'getOrder' && replica.alive) this.#viewed(replica, client, (answer.body as OrderDto).id);
      if (operation === 'recent' && replica.alive) this.#touched(replica, client);
      return { ...answer, admittedAt };
    } catch (error) {
      // A check that failed inside a port (at a commit) is the explorer's finding, not the service's error.
      if (error instanceof Violation) throw error;
      if (!replica.alive) return { status: 'refused', body: undefined };
      if (gone()) return { status: 'gone', body: undefined };
      const mapped = mapError(error);
      this.checks.hold(
        mapped.kind !== 'internal',
        INVARIANTS.answers,
        () => `${operation} on replica ${replica.index} failed unexpectedly (${mapped.httpStatus}): ${String(error)}`,
      );
      if (mapped.kind === 'backend-unavailable') {
        this.checks.hold(
          troubledAtStart || dbTroubled(),
          INVARIANTS.answers,
          () => `${operation}: 500 while the database was healthy: ${String(error)}`,
        );
      }
      return { status: mapped.httpStatus, body: { error: mapped.message }, kind: mapped.kind, admittedAt };
    } finally {
      if (counted) {
        counted = false;
        this.#liveLogins.set(gate, (this.#liveLogins.get(gate) ?? 1) - 1);
      }
      controller.abort(REQUEST_ENDED);
    }
  }

  /** RATE-headers as the transports send them: the bucket size, whole tokens left, Retry-After only on a refusal. */
  #checkHeaders(decision: RateLimitDecision): void {
    const headers: Record<string, string> = {};
    setRateLimitHeaders({ setHeader: (name, value) => (headers[name] = value) }, decision);
    this.checks.hold(
      headers['ratelimit-limit'] === String(RATE_BURST) &&
        Number(headers['ratelimit-remaining']) >= 0 &&
        Number(headers['ratelimit-remaining']) < RATE_BURST &&
        Number(headers['ratelimit-reset']) >= 1 &&
        (decision.allowed ? headers['retry-after'] === undefined : Number(headers['retry-after']) >= 1),
      INVARIANTS.rate,
      () => `rate-limit headers ${JSON.stringify(headers)} for allowed=${decision.allowed}`,
    );
  }

  #viewed(replica: Replica, client: Client, id: string): void {
    const key = this.#sessionKey(replica, client);
    let views = this.#views.get(key);
    if (views === undefined) this.#views.set(key, (views = new Set()));
    views.add(id);
    this.#viewCounts.set(key, (this.#viewCounts.get(key) ?? 0) + 1);
    const session = this.#touched(replica, client);
    session.recent = [id, ...session.recent.filter((r) => r !== id)].slice(0, SESSION_RECENT);
    session.views += 1;
  }

  /** The user's session on that process was used now: still open if used within the linger window, else a fresh one. */
  #touched(replica: Replica, client: Client): SessionModel {
    const key = this.#sessionKey(replica, client);
    const now = this.#runtime.nowMs();
    let session = this.#sessions.get(key);
    if (session === undefined || now >= session.lastUse + SESSION_LINGER_MS) {
      session = { recent: [], views: 0, lastUse: now };
      this.#sessions.set(key, session);
    }
    session.lastUse = now;
    return session;
  }

  /**
   * EXPLORE-rate: never more than burst + rate x elapsed admissions per client key: per replica process
   * for its own bucket's decisions, per fleet for the shared store's; each admission one decision.
   */
  #admit(replica: Replica, key: string, decision: RateLimitDecision): void {
    const source = this.#decisions.get(decision);
    this.checks.hold(source !== undefined, INVARIANTS.rate, () => `replica ${replica.index} admitted ${key} on a decision no store took`);
    // Rule LIMIT-rate-keying: the limiter keyed the request on the address the explorer reads the rule to give.
    const event = this.#announcedDecisions.get(decision);
    this.checks.hold(
      this.#options.seed % 5 === 4 || (event?.key === key && event.source === source),
      INVARIANTS.rate,
      () => `replica ${replica.index} keyed a request of ${key} on ${event?.key} (${event?.source}, taken by ${source})`,
    );
    const scope = source === 'shared' ? `fleet.${key}` : `${replica.index}.${replica.incarnation}.${key}`;
    const now = this.#runtime.nowMs();
    this.#lastAdmission.set(`${replica.index}.${replica.incarnation}.${key}`, now);
    const entry = this.#admitted.get(scope) ?? { first: now, count: 0 };
    entry.count += 1;
    this.#admitted.set(scope, entry);
    const bound = RATE_BURST + (RATE_PER_SECOND * (now - entry.first)) / 1_000;
    this.checks.hold(
      entry.count <= bound + 1e-9,
      INVARIANTS.rate,
      () => `${scope} (${source}) admitted ${entry.count} requests in ${now - entry.first} ms (bound ${bound})`,
    );
  }

  /**
   * EXPLORE-answers: a status the route declares; 401 exactly for a missing, forged or expired token
   * (expired: the service's clock at admission at or past exp, spec 5 rule 5), with its spec 5 message.
   */
  #checkAnswer(operation: Operation, answer: Answer, tokenIat: number | undefined): void {
    if (answer.status === 'refused' || answer.status === 'gone') return;
    const allowed: Record<Operation, readonly number[]> = {
      login: [200, 401, 429, 500],
      // 422: a key reused with another body (IDEM-mismatch); #sendCreate checks it was one.
      createOrder: [201, 400, 401, 422, 429, 500],
      getOrder: [200, 400, 401, 403, 404, 429, 500],
      listOrders: [200, 401, 429, 500],
      recent: [200, 401, 429],
    };
    this.checks.hold(
      allowed[operation].includes(answer.status),
      INVARIANTS.answers,
      () => `${operation} answered ${answer.status} ${JSON.stringify(answer.body)}`,
    );
    if (operation === 'login' || answer.status === 429) return;
    const message = (answer.body as { error?: string } | undefined)?.error;
    if (tokenIat === undefined) {
      this.checks.hold(answer.status === 401, INVARIANTS.answers, () => `${operation} without a valid token answered ${answer.status}`);
      return;
    }
    const expiresAtMs = (tokenIat + TOKEN_LIFETIME_MS / 1_000) * 1_000;
    const at = answer.admittedAt ?? this.#runtime.nowMs();
    if (at >= expiresAtMs) {
      this.checks.hold(
        answer.status === 401 && message === MESSAGES.invalidToken,
        INVARIANTS.answers,
        () =>
          `${operation} with a token expired ${at - expiresAtMs} ms before admission answered ${answer.status} ${JSON.stringify(answer.body)}`,
      );
    } else {
      this.checks.hold(
        answer.status !== 401,
        INVARIANTS.answers,
        () => `${operation} with a token ${expiresAtMs - at} ms from expiry answered 401 ${JSON.stringify(answer.body)}`,
      );
    }
  }

  async #login(user: number, replica: number, as: LoginAs, route: Route = 'direct'): Promise<string> {
    const client = this.#client(user);
    const credentials = {
      right: { username: client.username, password: client.password },
      wrong: { username: client.username, password: 'not-the-password' },
      unknown: { username: `nobody-${user}`, password: client.password },
      empty: { username: '', password: client.password },
      legacy: { username: (LEGACY[user % LEGACY.length] as (typeof LEGACY)[number]).username, password: LEGACY_PASSWORD },
    }[as];
    const status = await this.#send(
      replica,
      client,
      'login',
      { body: JSON.stringify(credentials) },
      (answer) => {
        if (as !== 'right') {
          this.checks.hold(answer.status !== 200, INVARIANTS.answers, () => `login as ${as} answered 200`);
          if (answer.status === 401)
            this.checks.hold(
              (answer.body as { error?: string }).error === MESSAGES.invalidCredentials,
              INVARIANTS.answers,
              () => `login as ${as}: 401 ${JSON.stringify(answer.body)}`,
            );
        }
        if (answer.status === 200 && as === 'right') {
          const token = (answer.body as { token: string }).token;
          client.token = token;
          client.stale = false;
          client.tokenIat = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number }).iat;
        }
      },
      { route },
    );
    return String(status);
  }

  /** EXPLORE-login-gate: logins sent at once by one client: at most concurrency + its queue are taken. */
  async #loginBurst(user: number, replicaIndex: number, count: number): Promise<string> {
    const replica = this.#live(replicaIndex);
    if (replica === undefined) return 'refused';
    const client = this.#client(user);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const via = this.#via(client, 'direct');
    const answers = await this.#await(
      Promise.all(Array.from({ length: count }, () => this.#handle(replica, client, 'login', { body }, undefined, via))),
      60_000,
    );
    if (answers === undefined) return 'in flight';
    // Taken: the password was checked (200 or 401). A 500 is the database failing before the gate.
    const taken = answers.filter((a) => a.status === 200 || a.status === 401).length;
    this.checks.hold(
      taken <= this.#gate.concurrency + this.#gate.queuePerClient,
      INVARIANTS.loginGate,
      () => `${taken} of ${count} simultaneous logins of one client were taken`,
    );
    const busy = answers.filter((a) => a.kind === 'login-busy').length;
    this.checks.hold(
      taken + busy + answers.filter((a) => a.limited === true || a.status === 'refused' || a.status === 500).length === count,
      INVARIANTS.loginGate,
      () => `a burst login was refused for another reason: ${JSON.stringify(answers)}`,
    );
    return answers.map((a) => a.status).join(',');
  }

  /**
   * Logins of one user from several addresses at once (rule LOGIN-gate-fair): everyone past the limiter
   * is answered; no client has more than concurrency + its queue taken; refusals are the gate's.
   */
  async #loginStorm(replicaIndex: number, perClient: readonly number[]): Promise<string> {
    const replica = this.#live(replicaIndex);
    if (replica === undefined) return 'refused';
    const client = this.#client(0);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const sent = perClient.flatMap((n, c) =>
      Array.from({ length: n }, () => {
        const address = `10.2.0.${c + 1}`;
        return this.#handle(replica, client, 'login', { body }, undefined, { peer: address, forwardedFor: undefined, key: address }).then(
          (answer) => ({ c, answer }),
        );
      }),
    );
    const answers = await this.#await(Promise.all(sent), 60_000);
    if (answers === undefined) return 'in flight';
    for (let c = 0; c < perClient.length; c++) {
      const mine = answers.filter((a) => a.c === c).map((a) => a.answer);
      const taken = mine.filter((a) => a.status === 200).length;
      this.checks.hold(
        taken <= this.#gate.concurrency + this.#gate.queuePerClient,
        INVARIANTS.loginGate,
        () => `client 10.2.0.${c + 1} had ${taken} of ${mine.length} simultaneous logins taken`,
      );
    }
    this.checks.hold(
      answers.every(
        ({ answer: a }) => a.status === 200 || a.kind === 'login-busy' || a.limited === true || a.status === 'refused' || a.status === 500,
      ),
      INVARIANTS.loginGate,
      () => `a storm login was answered otherwise: ${JSON.stringify(answers.map((a) => a.answer.status))}`,
    );
    return answers.map((a) => a.answer.status).join(',');
  }

  /**
   * A client that goes away while its request waits: logins sent at once, the last `abandon` of them
   * given up `afterMs` later (queued in the login gate), or one create, GET or list given up on a slow
   * database. The logins run under one wait (one driver of the clock: a seed replays the same).
   */
  async #abandon(step: Extract<Step, { op: 'abandon' }>): Promise<string> {
    const replica = this.#live(step.replica);
    if (replica === undefined) return 'refused';
    const client = this.#client(step.user);
    const options = { abandonAfterMs: step.afterMs };
    if (step.what === 'create') return this.#sendCreate(this.#newRequest(step.user, 1, true), step.replica, options);
    if (step.what === 'get') return this.#get(step.user, step.replica, 'own', 0, 'direct', options);
    if (step.what === 'list') return this.#list(step.user, step.replica, null, null, options);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const via = this.#via(client, 'direct');
    const sent = Array.from({ length: step.count }, (_, i) => {
      const controller = new AbortController();
      let gone = false;
      if (i >= step.count - step.abandon) {
        this.#runtime.time.setTimeout(() => {
          gone = true;
          controller.abort(CLIENT_GONE);
          // The moment the caller left: the gate must already hold none of those who went away.
          this.#checkGates();
        }, step.afterMs);
      }
      return this.#handle(replica, client, 'login', { body }, undefined, via, controller, () => gone);
    });
    const answers = await this.#await(Promise.all(sent), 60_000);
    if (answers === undefined) return 'in flight';
    for (const answer of answers) {
      if (answer.status === 'gone' || !replica.alive) continue;
      this.#checkAnswer('login', answer, undefined);
      if (answer.status === 200) {
        const token = (answer.body as { token: string }).token;
        client.token = token;
        client.stale = false;
        client.tokenIat = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number }).iat;
      }
    }
    // Right after the last caller left: the gate must hold none of those who went away.
    this.#checkGates();
    return answers.map((a) => a.status).join(',');
  }

  /**
   * EXPLORE-rate: a scanner spraying `count` addresses (no token: each is one bucket and a 401) in two
   * halves a second apart. Each is admitted once, answered 401, and the process keeps a bounded number
   * of buckets (rule LIMIT-rate-keying: full buckets are pruned once 10,000 are held).
   */
  async #scan(replicaIndex: number, count: number): Promise<string> {
    const replica = this.#live(replicaIndex);
    if (replica === undefined) return 'down';
    const client = this.#client(0);
    let unauthorised = 0;
    // In chunks under one wait each: a slow shared store (the cache's Redis) makes each decision wait on the clock.
    const chunk = 250;
    for (let start = 0; start < count; start += chunk) {
      if (start <= count / 2 && start + chunk > count / 2) await this.#advance(1_000);
      const answers = await this.#await(
        Promise.all(
          Array.from({ length: Math.min(chunk, count - start) }, (_, j) => {
            const i = start + j;
            const address = `198.18.${Math.floor(i / 250)}.${i % 250}`;
            return this.#handle(replica, client, 'listOrders', {}, undefined, { peer: address, forwardedFor: undefined, key: address });
          }),
        ),
        60_000,
      );
      if (answers === undefined || !replica.alive) return 'cut short';
      for (const answer of answers) {
        this.checks.hold(
          answer.status === 401 || answer.status === 429,
          INVARIANTS.answers,
          () => `a scan request without a token answered ${answer.status}`,
        );
        if (answer.status === 401) unauthorised += 1;
      }
    }
    const held = replica.buckets.size;
    this.checks.hold(
      held <= 2 * 10_000 + 1,
      INVARIANTS.rate,
      () => `replica ${replica.index} holds ${held} rate-limit buckets after a scan of ${count} addresses`,
    );
    return `${unauthorised} x 401, ${held} buckets`;
  }

  /** EXPLORE-login-gate: logins wait in a gate's queue only for callers still there (an abandoned one leaves at once). */
  #checkGates(): void {
    for (const replica of this.#replicas) {
      if (!replica.alive) continue;
      const waiting = replica.gate.load.waiting;
      const live = this.#liveLogins.get(`${replica.index}.${replica.incarnation}`) ?? 0;
      this.checks.hold(
        waiting <= live,
        INVARIANTS.loginGate,
        () => `replica ${replica.index}'s login gate holds ${waiting} waiting logins, only ${live} callers are still there`,
      );
    }
  }

  async #forged(user: number, replica: number, kind: Forgery): Promise<string> {
    const client = this.#client(user);
    const secret = new TextEncoder().encode(EXPLORE_ENV.JWT_SECRET);
    const nowS = Math.floor(this.#runtime.nowMs() / 1_000);
    const sign = (
      claims: Record<string, unknown>,
      key: Uint8Array = secret,
      iat = nowS,
      lifetimeS = TOKEN_LIFETIME_MS / 1_000,
    ): Promise<string> =>
      this.#runtime.serial(() =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setSubject(client.userId)
          .setIssuer('orders')
          .setIssuedAt(iat)
          .setExpirationTime(iat + lifetimeS)
          .sign(key),
      );
    let header: string;
    switch (kind) {
      case 'garbage':
        header = 'Bearer not.a.token';
        break;
      case 'padded':
        header = `Bearer ${(await sign({ name: client.username })).replace(/\.([^.]*)$/, '.$1=')}`;
        break;
      case 'wrong-secret':
        header = `Bearer ${await sign({ name: client.username }, new TextEncoder().encode('another-secret-another-secret-another'))}`;
        break;
      case 'no-name':
        header = `Bearer ${await sign({})}`;
        break;
      case 'too-long':
        header = `Bearer ${await sign({ name: client.username }, secret, nowS, (2 * TOKEN_LIFETIME_MS) / 1_000)}`;
        break;
      case 'future':
        header = `Bearer ${await sign({ name: client.username }, secret, nowS + 3_600)}`;
        break;
      case 'empty':
        header = 'Bearer ';
        break;
      case 'basic':
        header = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
        break;
    }
    const want = kind === 'empty' || kind === 'basic' ? MESSAGES.missingCredentials : MESSAGES.invalidToken;
    const live = this.#live(replica);
    if (live === undefined) return 'refused';
    const answer = await this.#await(
      (async (): Promise<Answer> => {
        const decision = await live.limiter.take({ peer: client.address, forwardedFor: undefined });
        if (!decision.allowed) return { status: 429, body: undefined };
        this.#admit(live, client.limitKey, decision);
        try {
          await authenticate(header.startsWith('Bearer ') || header.startsWith('Basic ') ? header : undefined, live.tokens);
          return { status: 200, body: undefined };
        } catch (error) {
          const mapped = mapError(error);
          return { status: mapped.httpStatus, body: { error: mapped.message } };
        }
      })(),
      CLIENT_TIMEOUT_MS,
    );
    if (answer === undefined || answer.status === 429) return String(answer?.status ?? 'timeout');
    this.checks.hold(
      answer.status === 401 && (answer.body as { error: string }).error === want,
      INVARIANTS.answers,
      () => `a ${kind} token was answered ${answer.status} ${JSON.stringify(answer.body)}, want 401 ${want}`,
    );
    return String(answer.status);
  }

  async #sendCreate(request: CreateRequest, replica: number, options: { abandonAfterMs?: number; twice?: boolean } = {}): Promise<string> {
    const client = this.#client(request.user);
    const attempt: Attempt = { at: this.#runtime.nowMs(), status: undefined, orderId: undefined };
    request.attempts.push(attempt);
    const twinAttempt: Attempt | undefined = options.twice === true ? { at: attempt.at, status: undefined, orderId: undefined } : undefined;
    if (twinAttempt !== undefined) request.attempts.push(twinAttempt);
    const first = this.#replicas[replica % this.#replicas.length] as Replica;
    const sends = twinAttempt === undefined ? 1 : 2;
    const headers: Record<string, string> = request.key === undefined ? {} : { 'idempotency-key': `"${request.key}"` };
    const keyId = `${request.user}/${request.key}`;
    // The key as the model held it when this attempt was sent, and whether another attempt with it was
    // open then or is sent while this one is (either outcome of such a race is accepted).
    const claimBefore = this.#claims.get(keyId);
    const openBefore = request.key === undefined ? 0 : (this.#keyFlights.get(keyId) ?? 0);
    const sendsBefore = this.#keySends.get(keyId) ?? 0;
    if (request.key !== undefined) {
      this.#keyFlights.set(keyId, openBefore + sends);
      this.#keySends.set(keyId, sendsBefore + sends);
    }
    const racing = (): boolean => openBefore > 0 || (this.#keySends.get(keyId) ?? 0) > sendsBefore + 1;
    const status = await this.#send(
      replica,
      client,
      'createOrder',
      { body: JSON.stringify({ item: request.item, quantity: request.quantity }), headers },
      (answer, served) => {
        const mine = served === first || twinAttempt === undefined ? attempt : twinAttempt;
        mine.status = answer.status;
        if (request.key !== undefined && !racing()) this.#checkKeyAnswer(request, answer, claimBefore);
        if (request.quantity <= 0)
          this.checks.hold(answer.status !== 201, INVARIANTS.answers, () => `create with quantity ${request.quantity} answered 201`);
        if (answer.status !== 201) return;
        const dto = answer.body as OrderDto;
        mine.orderId = dto.id;
        const committed = this.#committed.get(dto.id);
        this.checks.hold(
          committed !== undefined && sameDto(orderDto(committed.order), dto),
          INVARIANTS.readable,
          () => `201 ${JSON.stringify(dto)} is not what the database holds`,
        );
        const original = committed === undefined ? undefined : this.#requestOf(committed.order);
        this.checks.hold(
          original !== undefined && original.key === request.key && original.user === request.user,
          INVARIANTS.keyOnce,
          () => `201 for ${request.item} (key ${request.key}) carried ${JSON.stringify(dto)}`,
        );
        this.#answered.set(dto.id, dto);
      },
      {
        ...(options.abandonAfterMs === undefined ? {} : { abandonAfterMs: options.abandonAfterMs }),
        ...(twinAttempt === undefined ? {} : { twin: replica + 1 }),
        // The attempt stays open until its work ends, answered or not.
        settled: () => {
          if (request.key !== undefined) this.#keyFlights.set(keyId, (this.#keyFlights.get(keyId) ?? 1) - 1);
        },
      },
    );
    if (attempt.status === undefined) attempt.status = status;
    if (status === 201 && attempt.orderId !== undefined) client.known.push(attempt.orderId);
    return `${status}${attempt.orderId === undefined ? '' : ` ${attempt.orderId}`}`;
  }

  /**
   * IDEM-replay / IDEM-mismatch / IDEM-expiry, from the explorer's model of the key's claim at the
   * moment the service started the create: alive with the same body, the claim's order; alive with
   * another body, 422; expired or never claimed, a new order. While another attempt with the key is
   * open, either outcome of that race is accepted.
   */
  #checkKeyAnswer(request: CreateRequest, answer: Answer, claim: KeyClaim | undefined): void {
    const status = answer.status;
    if (status !== 201 && status !== 422) return;
    const at = answer.admittedAt ?? this.#runtime.nowMs();
    // An attempt in flight across its key's expiry may see the key either way (see #onCommitted).
    if (claim !== undefined && at < claim.expiresAt && claim.expiresAt <= this.#runtime.nowMs()) return;
    const alive = claim !== undefined && claim.expiresAt > at;
    const sameBody = alive && claim.item === request.item && claim.quantity === request.quantity;
    const want = !alive ? 'a new order' : sameBody ? `201 with order ${claim.orderId}` : '422';
    const got = status === 422 ? '422' : (answer.body as OrderDto).id;
    const ok =
      status === 422
        ? alive && !sameBody && (answer.body as { error?: string }).error === MESSAGES.keyReused
        : alive
          ? sameBody && got === claim.orderId
          : got !== claim?.orderId;
    this.checks.hold(
      ok,
      INVARIANTS.keyOnce,
      () =>
        `key ${request.key} of user${request.user} with ${request.item} x${request.quantity}, started at ${at}, answered ${status} ${JSON.stringify(answer.body)}; ` +
        `want ${want} (claim ${claim === undefined ? 'none' : `${claim.orderId} for ${claim.item} x${claim.quantity} until ${claim.expiresAt}`})`,
    );
  }

  async #get(
    user: number,
    replica: number,
    target: 'own' | 'other' | 'missing' | 'malformed',
    pick: number,
    route: Route,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const client = this.#client(user);
    let id: string;
    let expect = target;
    const others = this.#clients.filter((c) => c !== client).flatMap((c) => c.known);
    if (target === 'own' && client.known.length > 0) id = client.known[pick % client.known.length] as string;
    else if (target === 'other' && others.length > 0) id = others[pick % others.length] as string;
    else if (target === 'malformed') id = pick % 2 === 0 ? 'not-a-uuid' : `${this.#ids.uuid()}x`;
    else {
      id = this.#ids.uuid();
      expect = 'missing';
    }
    return this.#getById(client, replica, id, expect, route, options);
  }

  async #getById(
    client: Client,
    replica: number,
    id: string,
    expect: 'own' | 'other' | 'missing' | 'malformed',
    route: Route,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const status = await this.#send(
      replica,
      client,
      'getOrder',
      { params: { id } },
      (answer) => {
        const s = answer.status;
        if (s === 401 || s === 429 || s === 'refused' || s === 'gone') return;
        const want = { own: [200, 500], other: [403, 500], missing: [404, 500], malformed: [400] }[expect];
        const message = { own: undefined, other: MESSAGES.forbidden, missing: MESSAGES.notFound, malformed: MESSAGES.invalidOrderId }[
          expect
        ];
        this.checks.hold(
          want.includes(s) && (s !== want[0] || message === undefined || (answer.body as { error?: string }).error === message),
          INVARIANTS.get,
          () => `GET of ${expect} order ${id} by user${client.index} answered ${s} ${JSON.stringify(answer.body)}`,
        );
        if (s !== 200) return;
        const committed = this.#committed.get(id);
        this.checks.hold(
          committed !== undefined && sameDto(orderDto(committed.order), answer.body as OrderDto),
          INVARIANTS.get,
          () =>
            `GET ${id} answered ${JSON.stringify(answer.body)}, the database holds ${JSON.stringify(committed && orderDto(committed.order))}`,
        );
      },
      { ...options, route },
    );
    return `${status} ${expect}`;
  }

  /**
   * EXPLORE-list: every page holds only the caller's orders as stored, newest first, without repeats;
   * and when nothing of the caller's was committed while it ran, exactly the explorer's slice of them
   * (spec 4.1 rule 6's clamps, read by the explorer: explore/oracle.ts).
   */
  async #list(
    user: number,
    replica: number,
    limit: string | null,
    offset: string | null,
    options: { abandonAfterMs?: number } = {},
  ): Promise<string> {
    const client = this.#client(user);
    const query = new URLSearchParams();
    if (limit !== null) query.set('limit', limit);
    if (offset !== null) query.set('offset', offset);
    const mine = (): Order[] => [...this.#committed.values()].filter((c) => c.order.userId === client.userId).map((c) => c.order);
    const before = mine().length;
    let ids: string[] = [];
    const status = await this.#send(
      replica,
      client,
      'listOrders',
      { query },
      (answer) => {
        if (answer.status !== 200) return;
        const orders = (answer.body as { orders: OrderDto[] }).orders;
        ids = orders.map((o) => o.id);
        const all = mine();
        const expected = expectedPage(all, limit, offset);
        this.checks.hold(new Set(ids).size === ids.length, INVARIANTS.list, () => `a page repeats an order: ${ids.join(',')}`);
        for (let i = 0; i < orders.length; i++) {
          const dto = orders[i] as OrderDto;
          const committed = this.#committed.get(dto.id);
          this.checks.hold(
            committed !== undefined && committed.order.userId === client.userId,
            INVARIANTS.list,
            () => `user${user}'s page holds ${dto.id}, not theirs`,
          );
          this.checks.hold(
            committed !== undefined && sameDto(orderDto(committed.order), dto),
            INVARIANTS.list,
            () => `listed ${JSON.stringify(dto)} differs from the database`,
          );
          const next = orders[i + 1];
          if (next !== undefined)
            this.checks.hold(newerFirst(dto, next), INVARIANTS.list, () => `page not newest first: ${dto.id} before ${next.id}`);
        }
        if (all.length === before) {
          this.checks.hold(
            ids.length === expected.length && ids.every((id, i) => id === expected[i]?.id),
            INVARIANTS.list,
            () =>
              `limit=${limit} offset=${offset} of user${user}'s ${all.length} orders answered ${ids.length} (${ids.slice(0, 3).join(',')}…), want ${expected.length} (${expected
                .slice(0, 3)
                .map((o) => o.id)
                .join(',')}…)`,
          );
        } else {
          this.checks.hold(
            ids.length <= expected.length + (all.length - before),
            INVARIANTS.list,
            () => `a page of ${ids.length} for ${limit}`,
          );
        }
        for (const id of ids) if (!client.known.includes(id)) client.known.push(id);
      },
      options,
    );
    return `${status} ${ids.length}`;
  }

  /**
   * EXPLORE-recent and EXPLORE-session-retention: the list is the explorer's model of that session (the
   * last SESSION_RECENT distinct views, newest first): intact while it was used within the linger
   * window, empty once the window passed (a new session), never more than SESSION_RECENT, no repeats.
   */
  async #recent(user: number, replica: number): Promise<string> {
    const client = this.#client(user);
    let recent: string[] = [];
    const key = (served: Replica): string => this.#sessionKey(served, client);
    // The model as it stood when the request was sent, and whether another request of this user was open there.
    const target = this.#replicas[replica % this.#replicas.length] as Replica;
    const stored = this.#sessions.get(key(target));
    const model = stored === undefined ? undefined : { recent: [...stored.recent], lastUse: stored.lastUse };
    const racing = (this.#userFlights.get(key(target)) ?? 0) > 0;
    const status = await this.#send(replica, client, 'recent', {}, (answer, served) => {
      if (answer.status !== 200) return;
      recent = (answer.body as { recent: string[] }).recent;
      const viewed = this.#views.get(key(served)) ?? new Set();
      this.checks.hold(
        recent.length <= SESSION_RECENT,
        INVARIANTS.recent,
        () => `recent holds ${recent.length} > SESSION_RECENT ${SESSION_RECENT}`,
      );
      this.checks.hold(new Set(recent).size === recent.length, INVARIANTS.recent, () => `recent repeats an id: ${recent.join(',')}`);
      this.checks.hold(
        recent.every((id) => viewed.has(id)),
        INVARIANTS.recent,
        () =>
          `recent of user${user} on replica ${served.index} holds ${recent.filter((id) => !viewed.has(id)).join(',')}, never viewed there`,
      );
      if (racing || answer.admittedAt === undefined) return;
      const last = model?.lastUse;
      const expected = model !== undefined && answer.admittedAt < model.lastUse + SESSION_LINGER_MS ? model.recent : [];
      this.checks.hold(
        recent.length === expected.length && recent.every((id, i) => id === expected[i]),
        INVARIANTS.retention,
        () =>
          `recent of user${user} on replica ${served.index} is [${recent.join(',')}], want [${expected.join(',')}]: ` +
          (last === undefined
            ? 'no session'
            : `session last used ${(answer.admittedAt as number) - last} ms before (linger ${SESSION_LINGER_MS} ms)`),
      );
    });
    return `${status} ${recent.length}`;
  }

  /** Notes when the database was last troubled: a backlog sample may be stale for a while after. */
  #trackDatabase(): void {
    const trouble = this.#backends.store.trouble;
    if (trouble.isDown || trouble.delayMs > 0 || trouble.queuedFailures > 0) this.#dbCalmSince = this.#runtime.nowMs();
  }

  /**
   * EXPLORE-health: each down backend shows on its node while down; the publisher's node also shows an
   * outbox backlog (an event pending 10 s or more, rule EVT-7-delivery), so while the broker is up it
   * may be unhealthy only when an event was that old within the last samples. `clean` demands a clean
   * report. The sessions the replica holds are the ones the explorer expects open, none held.
   */
  async #health(index: number, clean: boolean): Promise<string> {
    const replica = this.#live(index);
    if (replica === undefined) return 'down';
    this.#trackDatabase();
    const report = await this.#await(replica.checker.health(), 10_000);
    if (report === undefined) return 'in flight';
    const now = this.#runtime.nowMs();
    for (const name of ['database', 'cache', 'publisher'] as const) {
      const node = report.nodes?.find((n) => n.name === name);
      const down = troubleOf(this.#backends, name as SimTarget).isDown;
      // The publisher's backlog is checked below, against the relay's own sample.
      const excused = name === 'publisher' && !down;
      this.checks.hold(
        node !== undefined && (excused || (node.status === 'ok') === !down),
        INVARIANTS.health,
        () =>
          `replica ${replica.index}'s health node ${name} is ${node?.status ?? 'missing'} (${node?.error ?? ''}) while the ${name} is ${down ? 'down' : 'up'}`,
      );
    }
    if (clean) this.checks.hold(report.clean, INVARIANTS.health, () => `health not clean after healing: ${JSON.stringify(report.nodes)}`);
    // The relay's metrics and its health come from one backlog sample (EVT-7-delivery): they agree, and
    // the sample is recent: its oldest event is still in the outbox, or left it (announced) within the
    // last samples, or the database was in trouble then (a sample that fails keeps the one before).
    const stats = replica.relay.stats();
    const publisher = report.nodes?.find((n) => n.name === 'publisher');
    if (publisher !== undefined && !this.#backends.bus.trouble.isDown) {
      const aged = (stats.pending ?? 0) >= RELAY.unhealthyPending || (stats.oldestAgeSeconds ?? 0) >= RELAY.unhealthyAgeMs / 1_000;
      this.checks.hold(
        (publisher.status !== 'ok') === aged,
        INVARIANTS.health,
        () =>
          `publisher node ${publisher.status} (${publisher.error ?? ''}) while the relay's metrics say ${stats.pending} pending, oldest ${stats.oldestAgeSeconds} s`,
      );
      if (aged && stats.oldestAgeSeconds !== undefined) {
        const createdAt = now - stats.oldestAgeSeconds * 1_000;
        // Orders created in the same millisecond are told apart by whether any of them explains the sample.
        const candidates = [...this.#committed.values()].filter((c) => Math.abs(c.order.createdAt.getTime() - createdAt) < 1);
        const pendingIds = new Set(this.#backends.store.pendingEvents().map((e) => e.id));
        const recent = 2 * RELAY.sampleMs + this.#backends.store.trouble.delayMs;
        const announcedAt = (id: string): number | undefined =>
          this.#lines.find((l) => l.msg === 'order placed' && l.fields['order_id'] === id)?.at;
        const explained = candidates.some((c) => {
          const at = announcedAt(c.order.id);
          return pendingIds.has(c.eventId) || at === undefined || at >= now - recent;
        });
        this.checks.hold(
          candidates.length > 0 && (explained || now - this.#dbCalmSince < recent + 3_000),
          INVARIANTS.health,
          () =>
            `replica ${replica.index}'s relay reports an event ${stats.oldestAgeSeconds} s old pending, ` +
            `${candidates.length === 0 ? 'which no order has' : `announced ${candidates.map((c) => now - (announcedAt(c.order.id) ?? now)).join('/')} ms ago`}: its backlog sample is stale`,
        );
      }
    }
    // Sessions: none held between steps; as many open (live or lingering) as the explorer expects.
    const counts = replica.sessions.counts();
    const open = [...this.#sessions.entries()].filter(
      ([key, s]) => key.startsWith(`${replica.index}.${replica.incarnation}.`) && now < s.lastUse + SESSION_LINGER_MS,
    ).length;
    const racing = [...this.#userFlights.entries()].some(([key, n]) => n > 0 && key.startsWith(`${replica.index}.${replica.incarnation}.`));
    if (!racing) {
      for (const client of this.#clients) {
        const model = this.#sessions.get(this.#sessionKey(replica, client));
        const want = model !== undefined && now < model.lastUse + SESSION_LINGER_MS ? 'lingering' : 'absent';
        const state = replica.sessions.stateOf(client.userId as SessionKey);
        this.checks.hold(
          state === want,
          INVARIANTS.retention,
          () =>
            `user${client.index}'s session on replica ${replica.index} is ${state}, want ${want} (last used ${model === undefined ? 'never' : `${now - model.lastUse} ms ago`})`,
        );
      }
      this.checks.hold(
        counts.live === 0 && counts.live + counts.lingering === open,
        INVARIANTS.retention,
        () =>
          `replica ${replica.index} holds ${counts.live} live and ${counts.lingering} lingering sessions, the explorer expects 0 and ${open}`,
      );
    }
    return report.nodes?.map((n) => `${n.name}:${n.status}`).join(',') ?? 'none';
  }

  // ------------------------------------------------------------------ after the run

  /** Heal, bring every replica back, let time pass (the relay loops drain the outbox), then the checks of the whole history. */
  async finish(): Promise<void> {
    for (const target of ['database', 'cache', 'publisher'] as const) troubleOf(this.#backends, target).reset();
    for (const replica of this.#replicas) replica.lostAcks = 0;
    // Everything still in flight lands (a graceful stop too); then every replica is back.
    await this.#runtime.runUntil(() => this.#flights.size === 0, this.#runtime.nowMs() + 60 * 60_000);
    // The relay retries for as long as the broker or the database is away (EVT-7-delivery): once both
    // answer again, the replicas still running drain the outbox on their own, without a restart.
    const alive = this.#replicas.filter((r) => r.alive).length;
    if (alive > 0) {
      const drained = await this.#runtime.runUntil(() => this.#backends.store.pendingEvents().length === 0, this.#runtime.nowMs() + 60_000);
      this.checks.hold(
        drained,
        INVARIANTS.announced,
        () =>
          `${this.#backends.store.pendingEvents().length} events still pending 60 s after every backend healed, with ${alive} replica(s) running`,
      );
    }
    for (let r = 0; r < this.#replicas.length; r++) {
      const current = this.#replicas[r] as Replica;
      if (!current.alive) this.#replicas[r] = this.#newReplica(r, current.incarnation + 1);
    }
    await this.#runtime.settle();
    // The relays' own loops drain the outbox, redeliveries come back: quiet means nothing pending in the
    // outbox or the bus and nothing in any notifier's hands (a dead one's too), and it stays so for a while
    // (a failed delivery comes back on the bus's redelivery timer).
    const quiet = (): boolean =>
      this.#backends.store.pendingEvents().length === 0 &&
      this.#backends.bus.unacknowledged === 0 &&
      this.#incarnations.every((r) => r.inHand.size === 0);
    for (let round = 0; round < 100; round++) {
      await this.#runtime.runUntil(quiet, this.#runtime.nowMs() + 30_000);
      let stayed = true;
      for (let i = 0; i < 20 && stayed; i++) {
        await this.#runtime.jump(RELAY.sampleMs / 2);
        stayed = quiet();
      }
      if (stayed) break;
    }
    const announced = this.#lines.filter((line) => line.msg === 'order placed').length;
    this.note(
      `final t=${this.#runtime.time.offsetMs} orders=${this.#committed.size} announced=${announced} pending=${this.#backends.store.pendingEvents().length} ` +
        `duplicates-dropped=${this.#backends.bus.duplicates} died-holding=${this.#diedHolding.size} closed-sessions=${this.#lines.filter((l) => l.msg === 'session: closed').length}`,
    );
    for (let r = 0; r < this.#replicas.length; r++) await this.#health(r, true);
    this.#checkOrders();
    this.#checkAnnounced();
    await this.#checkReadable();
    await this.#checkSessions();
  }

  /** EXPLORE-no-phantom and EXPLORE-key-once, from the database's side. */
  #checkOrders(): void {
    const perRequest = new Map<number, string[]>();
    for (const { order } of this.#committed.values()) {
      const request = this.#requestOf(order);
      this.checks.hold(
        request !== undefined && request.quantity === order.quantity,
        INVARIANTS.noPhantom,
        () => `order ${order.id} (${order.item} x${order.quantity}) answers no create`,
      );
      if (request === undefined) continue;
      const owner = this.#client(request.user).userId;
      this.checks.hold(
        owner === order.userId,
        INVARIANTS.noPhantom,
        () => `order ${order.id} belongs to ${order.userId}, asked for by user${request.user}`,
      );
      perRequest.set(request.id, [...(perRequest.get(request.id) ?? []), order.id]);
    }
    for (const request of this.#requests) {
      const orders = perRequest.get(request.id) ?? [];
      this.checks.hold(
        orders.length <= request.attempts.length,
        INVARIANTS.noPhantom,
        () => `${orders.length} orders for ${request.item}, sent ${request.attempts.length} times`,
      );
    }
  }

  /** EXPLORE-announced: from the notifier's `order placed` lines of every replica, dead or alive. */
  #checkAnnounced(): void {
    const counts = new Map<string, number>();
    for (const line of this.#lines) {
      if (line.msg !== 'order placed') continue;
      const id = String(line.fields['order_id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      const committed = this.#committed.get(id);
      this.checks.hold(committed !== undefined, INVARIANTS.announced, () => `announced order ${id} does not exist`);
      this.checks.hold(
        committed?.order.userId === line.fields['user_id'] && committed?.order.item === line.fields['item'],
        INVARIANTS.announced,
        () => `announced order ${id} with ${JSON.stringify(line.fields)}, the database holds ${JSON.stringify(committed?.order)}`,
      );
    }
    for (const [id, { eventId }] of this.#committed) {
      const n = counts.get(id) ?? 0;
      this.checks.hold(n >= 1, INVARIANTS.announced, () => `order ${id} was never announced`);
      if (!this.#diedHolding.has(eventId))
        this.checks.hold(n === 1, INVARIANTS.announced, () => `order ${id} was announced ${n} times and no replica died holding it`);
    }
  }

  /** EXPLORE-created-readable: every 201 from every replica, by its owner only. */
  async #checkReadable(): Promise<void> {
    for (const client of this.#clients) {
      client.token = undefined;
      const status = await this.#login(client.index, 0, 'right');
      this.checks.hold(status === '200', INVARIANTS.readable, () => `user${client.index} cannot log in after healing: ${status}`);
    }
    let reader = 0;
    for (const [id, dto] of this.#answered) {
      const committed = this.#committed.get(id);
      const owner = this.#clients.find((c) => c.userId === committed?.order.userId);
      for (const replica of this.#replicas) {
        // The owner from every replica; everyone else from one (their 403 does not depend on the replica).
        for (const client of replica.index === 0 ? this.#clients : owner === undefined ? [] : [owner]) {
          // Each read comes from an address of its own: the limiter is not what is checked here.
          const address = `10.1.${Math.floor(reader / 250)}.${reader++ % 250}`;
          const answer = await this.#await(
            this.#handle(replica, client, 'getOrder', { params: { id } }, client.token, {
              peer: address,
              forwardedFor: undefined,
              key: address,
            }),
            60_000,
          );
          if (client === owner) {
            this.checks.hold(
              answer?.status === 200 && sameDto(answer.body as OrderDto, dto),
              INVARIANTS.readable,
              () => `201 ${id} read by its owner from replica ${replica.index}: ${answer?.status} ${JSON.stringify(answer?.body)}`,
            );
          } else {
            this.checks.hold(
              answer?.status === 403,
              INVARIANTS.readable,
              () => `201 ${id} read by user${client.index} from replica ${replica.index}: ${answer?.status}`,
            );
          }
        }
      }
    }
  }

  /**
   * EXPLORE-session-flush: once the linger window has passed with nothing held, every session has
   * closed with its flush line, and the views those lines count are the views made on that process.
   */
  async #checkSessions(): Promise<void> {
    await this.#runtime.jump(SESSION_LINGER_MS + 1_000);
    for (const replica of this.#replicas) {
      this.checks.hold(
        replica.sessions.size === 0,
        INVARIANTS.sessions,
        () => `replica ${replica.index} still holds ${replica.sessions.size} session(s) ${SESSION_LINGER_MS} ms after the last request`,
      );
    }
    const flushedViews = new Map<string, number>();
    for (const line of this.#lines) {
      if (line.msg !== 'session: closed') continue;
      const user = this.#clients.find((c) => c.userId === line.fields['user'])?.index ?? -1;
      const key = `${line.replica}.${line.incarnation}.${user}`;
      flushedViews.set(key, (flushedViews.get(key) ?? 0) + Number(line.fields['views']));
      const viewed = this.#views.get(key) ?? new Set();
      const recent = line.fields['recent'] as string[];
      this.checks.hold(
        recent.every((id) => viewed.has(id)) && recent.length <= SESSION_RECENT,
        INVARIANTS.sessions,
        () => `flush line of ${key} holds ${recent.join(',')}`,
      );
    }
    for (const [key, views] of this.#viewCounts) {
      const [replica, incarnation] = key.split('.');
      if (!this.#flushed.has(`${replica}.${incarnation}`)) continue;
      this.checks.hold(
        (flushedViews.get(key) ?? 0) === views,
        INVARIANTS.sessions,
        () => `${views} views on ${key}, its flush lines count ${flushedViews.get(key) ?? 0}`,
      );
    }
  }
}

/** A create's body as IDEM-mismatch compares it (item and quantity), per user: which request an order answers. */
function bodyKey(user: number, item: string, quantity: number): string {
  return `${user}\u0000${item}\u0000${quantity}`;
}
