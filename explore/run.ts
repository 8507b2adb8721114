import { createHash } from 'node:crypto';
import { loadServiceConfig, type ServiceConfig } from '../src/config/service.ts';
import { IDEMPOTENCY_KEY_TTL_MS } from '../src/domain/idempotency-key.ts';
import type { Order } from '../src/domain/order.ts';
import { pageOf } from '../src/service/order-service.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import { SESSION_LINGER_MS } from '../src/session/scope.ts';
import { mapError, type ErrorKind } from '../src/transports/errors/table.ts';
import { authenticate } from '../src/service/authenticate.ts';
import { queryInteger, toOrderDto, type OrderDto } from '../src/transports/http/rest/dto.ts';
import type { RestRequest } from '../src/transports/http/rest/api.ts';
import { Checks, INVARIANTS, Violation } from './invariants.ts';
import { Prng } from './prng.ts';
import { Replica, type LogLine, type Variant } from './replica.ts';
import { createSimBackends, troubleOf, type SimBackends, type SimTarget } from './sim-fakes.ts';
import { SimRuntime } from './sim-runtime.ts';
import { describeStep, type Step } from './workload.ts';

/** The fleet's settings (spec 8.1 variables), small enough that a 200-step run reaches every bound. */
export const EXPLORE_ENV = {
  JWT_SECRET: 'explore-secret-explore-secret-explore-secret',
  JWT_EXPIRY: '1h',
  RATE_LIMIT_RPS: '5',
  SESSION_RECENT: '3',
} as const;
/** How long a client waits for an answer before it calls the request ambiguous (and may retry). */
export const CLIENT_TIMEOUT_MS = 1_000;
const CACHE_TTL_MS = 5 * 60_000;
const CONCURRENT_LOGINS_PER_CLIENT = 1 + 2; // defaultLoginGateLimits(2): one running, two waiting

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

type Status = number | 'timeout' | 'refused';
interface Answer {
  readonly status: number | 'refused';
  readonly body: unknown;
  readonly kind?: ErrorKind;
  /** Refused by the rate limiter. */
  readonly limited?: boolean;
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
  readonly address: string;
  token: string | undefined;
  tokenIat: number;
  readonly requests: CreateRequest[];
  /** Orders this client has seen answered (201, a list page): what it may ask for later. */
  readonly known: string[];
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

let sharedConfig: ServiceConfig | undefined;
function exploreConfig(): ServiceConfig {
  sharedConfig ??= loadServiceConfig({ ...EXPLORE_ENV }, { embedded: true });
  return sharedConfig;
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
  readonly #config = exploreConfig();
  readonly #lines: LogLine[] = [];
  readonly #backends: SimBackends;
  readonly #replicas: Replica[] = [];
  readonly #clients: Client[] = [];
  readonly #requests: CreateRequest[] = [];
  /** Every order the database committed, with its event id: the ground truth of the checks. */
  readonly #committed = new Map<string, { order: Order; eventId: string }>();
  /** What a 201 carried, by order id (also 201s that came after the client gave up). */
  readonly #answered = new Map<string, OrderDto>();
  /** Orders viewed (GET 200) per replica incarnation and user. */
  readonly #views = new Map<string, Set<string>>();
  readonly #viewCounts = new Map<string, number>();
  /** Incarnations stopped gracefully (their sessions flushed) or still running at the end. */
  readonly #flushed = new Set<string>();
  /** Admissions by the rate limiter per replica incarnation and client. */
  readonly #admitted = new Map<string, { first: number; count: number }>();
  /** Events a replica held when it was killed: they may be announced twice (EXPLORE-announced). */
  readonly #diedHolding = new Set<string>();
  readonly #flights = new Set<Promise<void>>();
  /** Every replica incarnation of the run, dead ones too (a dead one may still hold a delivery). */
  readonly #incarnations: Replica[] = [];
  /** Deliveries that ended unacknowledged: each comes back after the bus's redelivery delay. */
  #unacknowledged = 0;
  /** Changes each time the database goes into trouble (down, fail-next): a 500 needs one. */
  #dbTroubleEpoch = 0;

  constructor(options: RunOptions) {
    this.#options = options;
    this.#ids = new Prng(options.seed, 2);
    this.#backends = createSimBackends(this.#runtime, { cacheTtlMs: CACHE_TTL_MS, logger: this.#busLogger() });
  }

  async start(): Promise<void> {
    for (let u = 0; u < this.#options.users; u++) {
      const client: Client = {
        index: u,
        userId: this.#ids.uuid(),
        username: `user${u}`,
        password: `password-${u}`,
        address: `10.0.0.${u + 1}`,
        token: undefined,
        tokenIat: 0,
        requests: [],
        known: [],
      };
      this.#clients.push(client);
      await this.#backends.store.add({ id: client.userId, username: client.username, passwordHash: await cheapHash(client.password) });
    }
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
  }

  #busLogger() {
    const ignore = (): void => undefined;
    return { debug: ignore, info: ignore, warn: ignore, error: ignore };
  }

  #newReplica(index: number, incarnation: number): Replica {
    this.#flushed.add(`${index}.${incarnation}`);
    const replica = new Replica({
      onUnacknowledged: () => void (this.#unacknowledged += 1),
      index,
      incarnation,
      config: this.#config,
      runtime: this.#runtime,
      backends: this.#backends,
      lines: this.#lines,
      newId: () => this.#ids.uuid(),
      onCommitted: (order, eventId) => this.#committed.set(order.id, { order, eventId }),
      variant: this.#options.variant,
    });
    this.#incarnations.push(replica);
    return replica;
  }

  // ------------------------------------------------------------------ steps

  async step(index: number, step: Step): Promise<void> {
    const outcome = await this.#execute(step);
    this.note(`${index} t=${this.#runtime.time.offsetMs} ${describeStep(step)} -> ${outcome}`);
  }

  async #execute(step: Step): Promise<string> {
    switch (step.op) {
      case 'login':
        return this.#login(step.user, step.replica, step.wrongPassword);
      case 'login-burst':
        return this.#loginBurst(step.user, step.replica, step.count);
      case 'create': {
        const client = this.#client(step.user);
        const id = this.#requests.length;
        const request: CreateRequest = {
          id,
          user: client.index,
          item: `item-${id}`,
          quantity: step.quantity,
          key: step.keyed ? `key-${id}` : undefined,
          attempts: [],
        };
        this.#requests.push(request);
        client.requests.push(request);
        const outcomes = [await this.#sendCreate(request, step.replica)];
        // The client's retry policy: the same request (and key) again, on the next replica, at once.
        for (let retry = 1; retry <= step.retries && /^(timeout|refused|500)/.test(outcomes[outcomes.length - 1] as string); retry++) {
          outcomes.push(await this.#sendCreate(request, step.replica + retry));
        }
        return outcomes.join(' / ');
      }
      case 'retry': {
        const client = this.#client(step.user);
        const last = client.requests[client.requests.length - 1];
        if (last === undefined) return 'nothing to retry';
        const status = last.attempts[last.attempts.length - 1]?.status;
        if (last.key === undefined && (status === 201 || status === 400)) return 'nothing to retry';
        return this.#sendCreate(last, step.replica);
      }
      case 'get':
        return this.#get(step.user, step.replica, step.target, step.pick);
      case 'list':
        return this.#list(step.user, step.replica, step.limit, step.offset);
      case 'recent':
        return this.#recent(step.user, step.replica);
      case 'burst': {
        const statuses: Status[] = [];
        for (let i = 0; i < step.count; i++)
          statuses.push(await this.#list(step.user, step.replica, '1', null).then((s) => s.split(' ')[0] as Status));
        return statuses.join(',');
      }
      case 'relay': {
        const replica = this.#live(step.replica);
        if (replica === undefined) return 'down';
        let round = 'in flight';
        await this.#await(
          replica.relay.relayOnce().then((r) => void (round = r)),
          step.waitMs,
        );
        return round;
      }
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
      case 'purge': {
        const deleted = await this.#await(this.#backends.store.purge(this.#runtime.time.now()), 30_000).catch(() => 'failed');
        return String(deleted);
      }
    }
  }

  async #stop(index: number): Promise<string> {
    const replica = this.#live(index);
    if (replica === undefined) return 'down';
    // The relay's stop-time flush backs off on the machine's clock (and Math.random) when a round fails:
    // not replayable. So a replica is stopped only while its rounds cannot fail: database and broker up,
    // no broker failure queued. The schedule draws no stop while either is down; a shrunk one may.
    const { store, bus } = this.#backends;
    if (store.trouble.isDown || bus.trouble.isDown || bus.trouble.queuedFailures > 0) return 'deferred';
    let stopped = false;
    await this.#await(
      replica.stop().then(() => void (stopped = true)),
      10 * 60_000,
    );
    return stopped ? 'stopped' : 'stopping';
  }

  // ------------------------------------------------------------------ requests

  #client(index: number): Client {
    return this.#clients[index % this.#clients.length] as Client;
  }

  #live(index: number): Replica | undefined {
    const replica = this.#replicas[index % this.#replicas.length] as Replica;
    return replica.alive ? replica : undefined;
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

  /**
   * One request as an HTTP transport runs it (CHAIN-order): the rate limiter, then for a protected route
   * `authenticate`, then the RestApi operation, errors mapped by the one error table. `then` sees the
   * answer whenever it comes (checks run then); the client waits CLIENT_TIMEOUT_MS for it.
   */
  async #send(
    replicaIndex: number,
    client: Client,
    operation: 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent',
    request: { body?: string; params?: Record<string, string>; query?: URLSearchParams; headers?: Record<string, string> },
    then: (answer: Answer, replica: Replica) => void,
  ): Promise<Status> {
    const replica = this.#live(replicaIndex);
    if (replica === undefined) return 'refused';
    const token = client.token;
    const tokenIat = token === undefined ? undefined : client.tokenIat;
    const work = this.#handle(replica, client, operation, request, token).then((answer) => {
      // A replica that died with the request in hand answers nothing.
      if (!replica.alive) return 'refused' as const;
      this.#checkAnswer(operation, answer, tokenIat);
      then(answer, replica);
      return answer.status;
    });
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
    operation: 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent',
    request: { body?: string; params?: Record<string, string>; query?: URLSearchParams; headers?: Record<string, string> },
    token: string | undefined,
    address: string = client.address,
  ): Promise<Answer> {
    const dbBefore = this.#dbTroubleEpoch;
    const dbTroubled = (): boolean =>
      this.#backends.store.trouble.isDown || this.#backends.store.trouble.queuedFailures > 0 || this.#dbTroubleEpoch !== dbBefore;
    const troubledAtStart = dbTroubled();
    const decision = await replica.limiter.take({ peer: address, forwardedFor: undefined });
    if (!decision.allowed) return { status: 429, body: undefined, limited: true };
    this.#admit(replica, address);
    const controller = new AbortController();
    const req: RestRequest = {
      params: request.params ?? {},
      query: request.query ?? new URLSearchParams(),
      readBody: () => Promise.resolve(request.body ?? ''),
      client: address,
      signal: controller.signal,
      headers: request.headers ?? {},
    };
    try {
      if (operation === 'login') return await replica.api.login(req);
      const principal = await authenticate(token === undefined ? undefined : `Bearer ${token}`, replica.tokens);
      const answer = await replica.api[operation](req, principal);
      // The service recorded a view in this user's session on this process (SESSION-view-on-get).
      if (operation === 'getOrder' && replica.alive) this.#viewed(replica, client, (answer.body as OrderDto).id);
      return answer;
    } catch (error) {
      if (!replica.alive) return { status: 'refused', body: undefined };
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
      return { status: mapped.httpStatus, body: { error: mapped.message }, kind: mapped.kind };
    } finally {
      controller.abort();
    }
  }

  #viewed(replica: Replica, client: Client, id: string): void {
    const key = `${replica.index}.${replica.incarnation}.${client.index}`;
    let views = this.#views.get(key);
    if (views === undefined) this.#views.set(key, (views = new Set()));
    views.add(id);
    this.#viewCounts.set(key, (this.#viewCounts.get(key) ?? 0) + 1);
  }

  /** EXPLORE-rate: never more than burst + rate × elapsed per client, per replica process. */
  #admit(replica: Replica, address: string): void {
    const key = `${replica.index}.${replica.incarnation}.${address}`;
    const now = this.#runtime.nowMs();
    const entry = this.#admitted.get(key) ?? { first: now, count: 0 };
    entry.count += 1;
    this.#admitted.set(key, entry);
    const rate = this.#config.rateLimitRps;
    const bound = rate + (rate * (now - entry.first)) / 1_000;
    this.checks.hold(
      entry.count <= bound + 1e-9,
      INVARIANTS.rate,
      () => `replica ${replica.index} admitted ${entry.count} requests of ${address} in ${now - entry.first} ms (bound ${bound})`,
    );
  }

  /** EXPLORE-answers: a status the route declares; 401 only for a missing or expired token, never 200 with one. */
  #checkAnswer(operation: string, answer: Answer, tokenIat: number | undefined): void {
    if (answer.status === 'refused') return;
    const allowed: Record<string, readonly number[]> = {
      login: [200, 401, 429, 500],
      // 422 never: a retry here always carries the body its key was first sent with.
      createOrder: [201, 400, 401, 429, 500],
      getOrder: [200, 400, 401, 403, 404, 429, 500],
      listOrders: [200, 401, 429, 500],
      recent: [200, 401, 429],
    };
    this.checks.hold(
      (allowed[operation] ?? []).includes(answer.status),
      INVARIANTS.answers,
      () => `${operation} answered ${answer.status} ${JSON.stringify(answer.body)}`,
    );
    if (operation === 'login' || answer.status === 429) return;
    const nowS = this.#runtime.nowMs() / 1_000;
    const expiryS = this.#config.tokens.expiryMs / 1_000;
    if (tokenIat === undefined) {
      this.checks.hold(answer.status === 401, INVARIANTS.answers, () => `${operation} without a token answered ${answer.status}`);
    } else if (nowS >= tokenIat + expiryS) {
      this.checks.hold(
        answer.status === 401,
        INVARIANTS.answers,
        () => `${operation} with a token expired ${Math.round(nowS - tokenIat - expiryS)} s ago answered ${answer.status}`,
      );
    } else if (nowS < tokenIat + expiryS - 2) {
      this.checks.hold(
        answer.status !== 401,
        INVARIANTS.answers,
        () => `${operation} with a live token answered 401 ${JSON.stringify(answer.body)}`,
      );
    }
  }

  async #login(user: number, replica: number, wrongPassword: boolean): Promise<string> {
    const client = this.#client(user);
    const body = JSON.stringify({ username: client.username, password: wrongPassword ? 'not-the-password' : client.password });
    const status = await this.#send(replica, client, 'login', { body }, (answer) => {
      if (wrongPassword) this.checks.hold(answer.status !== 200, INVARIANTS.answers, () => `login with a wrong password answered 200`);
      if (answer.status === 200) {
        const token = (answer.body as { token: string }).token;
        client.token = token;
        client.tokenIat = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { iat: number }).iat;
      }
    });
    return String(status);
  }

  /** EXPLORE-login-gate: logins sent at once by one client: at most concurrency + its queue are taken. */
  async #loginBurst(user: number, replicaIndex: number, count: number): Promise<string> {
    const replica = this.#live(replicaIndex);
    if (replica === undefined) return 'refused';
    const client = this.#client(user);
    const body = JSON.stringify({ username: client.username, password: client.password });
    const answers = await this.#await(
      Promise.all(Array.from({ length: count }, () => this.#handle(replica, client, 'login', { body }, undefined))),
      60_000,
    );
    if (answers === undefined) return 'in flight';
    // Taken: the password was checked (200 or 401). A 500 is the database failing before the gate.
    const taken = answers.filter((a) => a.status === 200 || a.status === 401).length;
    this.checks.hold(
      taken <= CONCURRENT_LOGINS_PER_CLIENT,
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

  async #sendCreate(request: CreateRequest, replica: number): Promise<string> {
    const client = this.#client(request.user);
    const attempt: Attempt = { at: this.#runtime.nowMs(), status: undefined, orderId: undefined };
    request.attempts.push(attempt);
    const headers: Record<string, string> = request.key === undefined ? {} : { 'idempotency-key': `"${request.key}"` };
    const status = await this.#send(
      replica,
      client,
      'createOrder',
      { body: JSON.stringify({ item: request.item, quantity: request.quantity }), headers },
      (answer) => {
        attempt.status = answer.status;
        if (request.quantity <= 0)
          this.checks.hold(answer.status !== 201, INVARIANTS.answers, () => `create with quantity ${request.quantity} answered 201`);
        if (answer.status !== 201) return;
        const dto = answer.body as OrderDto;
        attempt.orderId = dto.id;
        const committed = this.#committed.get(dto.id);
        this.checks.hold(
          committed !== undefined && sameDto(toOrderDto(committed.order), dto),
          INVARIANTS.readable,
          () => `201 ${JSON.stringify(dto)} is not what the database holds`,
        );
        this.checks.hold(
          dto.item === request.item && dto.quantity === request.quantity,
          INVARIANTS.keyOnce,
          () => `201 for ${request.item} carried ${JSON.stringify(dto)}`,
        );
        this.#answered.set(dto.id, dto);
      },
    );
    if (attempt.status === undefined) attempt.status = status;
    if (status === 201 && attempt.orderId !== undefined) client.known.push(attempt.orderId);
    return `${status}${attempt.orderId === undefined ? '' : ` ${attempt.orderId}`}`;
  }

  async #get(user: number, replica: number, target: 'own' | 'other' | 'missing' | 'malformed', pick: number): Promise<string> {
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
    const status = await this.#send(replica, client, 'getOrder', { params: { id } }, (answer) => {
      const s = answer.status;
      if (s === 401 || s === 429 || s === 'refused') return;
      const want = { own: [200, 500], other: [403, 500], missing: [404, 500], malformed: [400] }[expect];
      this.checks.hold(
        want.includes(s),
        INVARIANTS.get,
        () => `GET of ${expect} order ${id} by user${user} answered ${s} ${JSON.stringify(answer.body)}`,
      );
      if (s !== 200) return;
      const committed = this.#committed.get(id);
      this.checks.hold(
        committed !== undefined && sameDto(toOrderDto(committed.order), answer.body as OrderDto),
        INVARIANTS.get,
        () => `GET ${id} answered ${JSON.stringify(answer.body)}`,
      );
    });
    return `${status} ${expect}`;
  }

  async #list(user: number, replica: number, limit: string | null, offset: string | null): Promise<string> {
    const client = this.#client(user);
    const query = new URLSearchParams();
    if (limit !== null) query.set('limit', limit);
    if (offset !== null) query.set('offset', offset);
    const page = pageOf(queryInteger(limit), queryInteger(offset));
    let ids: string[] = [];
    const status = await this.#send(replica, client, 'listOrders', { query }, (answer) => {
      if (answer.status !== 200) return;
      const orders = (answer.body as { orders: OrderDto[] }).orders;
      ids = orders.map((o) => o.id);
      const userId = client.userId;
      this.checks.hold(orders.length <= page.limit, INVARIANTS.list, () => `a page of ${orders.length} for limit ${page.limit}`);
      this.checks.hold(new Set(ids).size === ids.length, INVARIANTS.list, () => `a page repeats an order: ${ids.join(',')}`);
      for (let i = 0; i < orders.length; i++) {
        const dto = orders[i] as OrderDto;
        const committed = this.#committed.get(dto.id);
        this.checks.hold(
          committed !== undefined && committed.order.userId === userId,
          INVARIANTS.list,
          () => `user${user}'s page holds ${dto.id}, not theirs`,
        );
        this.checks.hold(
          committed !== undefined && sameDto(toOrderDto(committed.order), dto),
          INVARIANTS.list,
          () => `listed ${JSON.stringify(dto)} differs from the database`,
        );
        const next = orders[i + 1];
        if (next !== undefined)
          this.checks.hold(newerFirst(dto, next), INVARIANTS.list, () => `page not newest first: ${dto.id} before ${next.id}`);
      }
      for (const id of ids) if (!client.known.includes(id)) client.known.push(id);
    });
    return `${status} ${ids.length}`;
  }

  async #recent(user: number, replica: number): Promise<string> {
    const client = this.#client(user);
    let recent: string[] = [];
    const status = await this.#send(replica, client, 'recent', {}, (answer, served) => {
      if (answer.status !== 200) return;
      recent = (answer.body as { recent: string[] }).recent;
      const viewed = this.#views.get(`${served.index}.${served.incarnation}.${user}`) ?? new Set();
      this.checks.hold(
        recent.length <= this.#config.sessionRecent,
        INVARIANTS.recent,
        () => `recent holds ${recent.length} > SESSION_RECENT ${this.#config.sessionRecent}`,
      );
      this.checks.hold(new Set(recent).size === recent.length, INVARIANTS.recent, () => `recent repeats an id: ${recent.join(',')}`);
      this.checks.hold(
        recent.every((id) => viewed.has(id)),
        INVARIANTS.recent,
        () =>
          `recent of user${user} on replica ${served.index} holds ${recent.filter((id) => !viewed.has(id)).join(',')}, never viewed there`,
      );
    });
    return `${status} ${recent.length}`;
  }

  /** EXPLORE-health: each down backend shows on its node while down; `clean` demands a clean report. */
  async #health(index: number, clean: boolean): Promise<string> {
    const replica = this.#live(index);
    if (replica === undefined) return 'down';
    const report = await this.#await(replica.checker.health(), 10_000);
    if (report === undefined) return 'in flight';
    for (const name of ['database', 'cache', 'publisher'] as const) {
      const node = report.nodes?.find((n) => n.name === name);
      const down = troubleOf(this.#backends, name as SimTarget).isDown;
      this.checks.hold(
        node !== undefined && (node.status === 'ok') === !down,
        INVARIANTS.health,
        () => `health node ${name} is ${node?.status ?? 'missing'} while the ${name} is ${down ? 'down' : 'up'}`,
      );
    }
    if (clean) this.checks.hold(report.clean, INVARIANTS.health, () => `health not clean after healing: ${JSON.stringify(report.nodes)}`);
    return report.nodes?.map((n) => `${n.name}:${n.status}`).join(',') ?? 'none';
  }

  // ------------------------------------------------------------------ after the run

  /** Heal, bring every replica back, let time pass, then the checks of the whole history. */
  async finish(): Promise<void> {
    for (const target of ['database', 'cache', 'publisher'] as const) troubleOf(this.#backends, target).reset();
    for (const replica of this.#replicas) replica.lostAcks = 0;
    // Everything still in flight lands (a graceful stop too); then every replica is back.
    await this.#runtime.runUntil(() => this.#flights.size === 0, this.#runtime.nowMs() + 60 * 60_000);
    for (let r = 0; r < this.#replicas.length; r++) {
      const current = this.#replicas[r] as Replica;
      if (!current.alive) this.#replicas[r] = this.#newReplica(r, current.incarnation + 1);
    }
    await this.#runtime.settle();
    // The outbox drains; redeliveries come back.
    // Quiet: nothing pending in the outbox or the bus, nothing in any notifier's hands (a dead one's too),
    // and no delivery failed during the round (its redelivery is on a timer the next round's jump fires).
    for (let round = 0; round < 100; round++) {
      const failedBefore = this.#unacknowledged;
      for (const replica of this.#replicas) await this.#await(replica.relay.relayOnce(), 60_000);
      await this.#runtime.jump(1_000);
      const quiet =
        this.#unacknowledged === failedBefore &&
        this.#backends.store.pendingEvents().length === 0 &&
        this.#backends.bus.unacknowledged === 0 &&
        this.#incarnations.every((r) => r.inHand.size === 0);
      if (quiet) break;
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
      const request = order.item.startsWith('item-') ? this.#requests[Number(order.item.slice('item-'.length))] : undefined;
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
      if (request.key === undefined) continue;
      const first = request.attempts[0]?.at ?? 0;
      const lifetimes = 1 + request.attempts.filter((a) => a.at >= first + IDEMPOTENCY_KEY_TTL_MS).length;
      this.checks.hold(
        orders.length <= lifetimes,
        INVARIANTS.keyOnce,
        () => `key ${request.key} yielded ${orders.length} orders (${orders.join(', ')}) within ${lifetimes} key lifetime(s)`,
      );
      const answered = new Set(request.attempts.flatMap((a) => (a.orderId === undefined ? [] : [a.orderId])));
      this.checks.hold(
        answered.size <= lifetimes,
        INVARIANTS.keyOnce,
        () => `key ${request.key} was answered with ${answered.size} different orders`,
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
      this.checks.hold(this.#committed.has(id), INVARIANTS.announced, () => `announced order ${id} does not exist`);
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
      const status = await this.#login(client.index, 0, false);
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
          const answer = await this.#await(this.#handle(replica, client, 'getOrder', { params: { id } }, client.token, address), 60_000);
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
        recent.every((id) => viewed.has(id)) && recent.length <= this.#config.sessionRecent,
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

function sameDto(a: OrderDto, b: OrderDto): boolean {
  return a.id === b.id && a.item === b.item && a.quantity === b.quantity && a.status === b.status && a.created_at === b.created_at;
}

function newerFirst(a: OrderDto, b: OrderDto): boolean {
  return a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);
}
