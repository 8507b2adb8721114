/**
 * Runs a seed's workload (workload.ts) through the service as the REST transports call it (RestApi over
 * OrderService and AuthService, errors through the one error table), on a backdrop: backends with the outbox
 * relay and the notifier running over them, the fakes (one fresh set per seed) or the real PostgreSQL, Redis
 * and NATS (one isolated schema, key prefix and stream per run). The service's clock and ids are the seed's,
 * so both runs write the same rows and only the backends can make the answers differ.
 */
import { pino } from 'pino';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { Prng } from '../../fakes/prng.ts';
import type { Backends } from '../../src/composition/backends.ts';
import type { Component } from '../../src/lifecycle/component.ts';
import type { Clock, IdGenerator } from '../../src/ports/clock.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { OrderEventSubscriber, OrderPlacedHandler } from '../../src/ports/order-events.ts';
import { AuthService } from '../../src/service/auth-service.ts';
import { authenticate, type Principal } from '../../src/service/authenticate.ts';
import { Notifier } from '../../src/service/notifier.ts';
import { OrderService } from '../../src/service/order-service.ts';
import { OutboxRelay } from '../../src/service/outbox-relay.ts';
import { hashPassword } from '../../src/service/password-hasher.ts';
import { TokenService } from '../../src/service/token-service.ts';
import { SessionScope } from '../../src/session/scope.ts';
import { mapError } from '../../src/transports/errors/table.ts';
import { RestApi, type RestRequest, type RestResult } from '../../src/transports/http/rest/api.ts';
import { TEST_PASSWORD_COST } from '../support/in-process-app.ts';
import { USERS, describeStep, generateWorkload, type Step, type Target } from './workload.ts';

/** What a client saw: the HTTP status and body of a REST answer, or the announcements (status 0). */
export interface Answer {
  readonly step: string;
  readonly status: number;
  readonly body: unknown;
}

export type DifferentialBackends = Pick<
  Backends,
  'repository' | 'credentials' | 'cache' | 'publisher' | 'subscriber' | 'outbox' | 'ledger' | 'components'
>;

/** Backends with the relay and the notifier running over them, and the notifier's `order placed` lines counted. */
export interface Backdrop {
  readonly backends: DifferentialBackends;
  /** `order placed` lines per order id since the backdrop started. */
  readonly announced: ReadonlyMap<string, number>;
  /** Every batch the notifier was handed, as event ids: what shapes the broker delivered in. */
  readonly batches: ReadonlyArray<readonly string[]>;
  /** Whether the broker holds nothing undelivered or unacknowledged. */
  idle(): boolean | Promise<boolean>;
  stop(): Promise<void>;
}

/** The relay's pause between rounds: short, so an announcement waits for little but the backends. */
const RELAY_POLL_MS = 10;
/** Bound on waiting for a seed's announcements (a hang guard: every wait is for a condition). */
const ANNOUNCE_GUARD_MS = 15_000;
const PASSWORD = 'differential-password';
/**
 * The fake broker's ack_wait in the check: short, so an event whose ack the seed loses comes back while its seed
 * still runs (the notifier's ledger must keep it to one line), not after the seed's backdrop has stopped.
 */
const FAKE_ACK_WAIT_MS = 5;

/** The one logger of a backdrop: counts the notifier's `order placed` lines, keeps warnings and errors for a failing report. */
class AnnouncementLog implements Logger {
  readonly announced = new Map<string, number>();
  readonly troubles: string[] = [];
  debug(): void {}
  info(fields: Readonly<Record<string, unknown>>, msg: string): void {
    if (msg !== 'order placed') return;
    const id = String(fields['order_id']);
    this.announced.set(id, (this.announced.get(id) ?? 0) + 1);
  }
  warn(fields: Readonly<Record<string, unknown>>, msg: string): void {
    this.troubles.push(`${msg} ${JSON.stringify(fields)}`);
  }
  error(fields: Readonly<Record<string, unknown>>, msg: string): void {
    this.troubles.push(`${msg} ${JSON.stringify(fields)}`);
  }
}

/** A logger for the backends' own components (the real adapters log through pino): silent. */
export const silentLogger = pino({ enabled: false });

/**
 * `idle`: whether the broker holds nothing undelivered or unacknowledged; an announcement answer waits for it
 * too, so a redelivery (a lost ack) is handled before the lines are counted.
 */
export async function startBackdrop(backends: DifferentialBackends, idle: () => boolean | Promise<boolean>): Promise<Backdrop> {
  const log = new AnnouncementLog();
  const started: Component[] = [];
  const controller = new AbortController();
  try {
    for (const component of backends.components) {
      await component.init?.();
      started.push(component);
    }
  } catch (error) {
    for (const component of started.reverse()) await component.stop?.().catch(() => undefined);
    throw error;
  }
  const relay = new OutboxRelay(backends.outbox, backends.publisher, log, { pollMs: RELAY_POLL_MS });
  const batches: string[][] = [];
  const seen =
    (handler: OrderPlacedHandler): OrderPlacedHandler =>
    (batch) => {
      batches.push(batch.map((envelope) => envelope.id));
      return handler(batch);
    };
  const subscriber: OrderEventSubscriber = {
    consumeOrderPlaced: (handler, signal) => backends.subscriber.consumeOrderPlaced(seen(handler), signal),
    drainOrderPlaced: (handler, timeoutMs) => backends.subscriber.drainOrderPlaced(seen(handler), timeoutMs),
  };
  const notifier = new Notifier(subscriber, backends.ledger, log);
  const runs = [relay.run(controller.signal), notifier.run(controller.signal)];
  return {
    backends,
    announced: log.announced,
    batches,
    idle,
    async stop() {
      controller.abort();
      await Promise.allSettled(runs);
      await relay.stop();
      await notifier.stop();
      for (const component of [...started].reverse()) await component.stop?.();
    },
  };
}

/** The fakes, with the shapes a seed draws in each (fakes/README.md) or unseeded; `store` may be a planted one. */
function fakeBackends(clock: Clock, store: MemoryStore, seed: number | undefined): { backends: DifferentialBackends; bus: MemoryEventBus } {
  const cache = new MemoryOrderCache({ seed, clock });
  const bus = new MemoryEventBus({ seed, ackWaitMs: FAKE_ACK_WAIT_MS });
  const ports = { repository: store, credentials: store, outbox: store, ledger: store, cache, publisher: bus, subscriber: bus };
  return { backends: { ...ports, components: [store, cache, bus] }, bus };
}

/** The seed's clock: it stands still (so creates tie) until the workload moves it. */
export class SeedClock implements Clock {
  readonly startMs: number;
  #ms: number;
  constructor(seed: number) {
    // Seeds apart by a year, so no two seeds' keys or orders could ever meet even if they shared a user.
    this.startMs = Date.UTC(2031, 0, 1) + seed * 366 * 24 * 60 * 60_000;
    this.#ms = this.startMs;
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

/**
 * The seed's ids, the same in every run of the seed: `<run>-<seed>-4xxx-yxxx-xxxxxxxxxxxx`. The run tag and
 * the seed keep rows of different runs and seeds apart on shared servers; the drawn rest decides how ties order.
 */
export function seedIds(runTag: string, seed: number): IdGenerator {
  const prng = new Prng(seed ^ 0x5eed);
  const hex = (n: number): string => Array.from({ length: n }, () => prng.int(16).toString(16)).join('');
  const seedHex = (seed & 0xffff).toString(16).padStart(4, '0');
  return () => `${runTag}-${seedHex}-4${hex(3)}-${'89ab'[prng.int(4)]}${hex(3)}-${hex(12)}`;
}

/** Runs `steps` through the service on `backdrop`, one answer per step (a burst answers once, its answers in call order). */
export async function runWorkload(options: {
  readonly backdrop: Backdrop;
  readonly steps: readonly Step[];
  readonly clock: SeedClock;
  readonly newId: IdGenerator;
  /** Usernames unique to the run and seed: `<prefix>u<i>`. */
  readonly userPrefix: string;
}): Promise<Answer[]> {
  const { backdrop, steps, clock, newId } = options;
  const { backends } = backdrop;
  const sessions = new SessionScope({ recentCapacity: 10, logger: silentLogger });
  const orders = new OrderService({ repository: backends.repository, cache: backends.cache, sessions, logger: silentLogger, clock, newId });
  const tokens = new TokenService('differential-check-secret-of-32-bytes-or-more', 60 * 60_000);
  const api = new RestApi(new AuthService(backends.credentials, tokens), orders);
  const passwordHash = await hashPassword(PASSWORD, TEST_PASSWORD_COST);
  const usernames = Array.from({ length: USERS }, (_, i) => `${options.userPrefix}u${i}`);
  for (const username of usernames) await backends.credentials.add({ id: newId(), username, passwordHash });
  /** Each user's principal, authenticated from the token of its last successful login (once, not per request: the
   * token check leaves the event loop, and a burst's attempts must reach the id generator in the order they were sent). */
  const principals: Principal[] = [];
  /** Every order id a 201 carried, in order of first appearance: what `get` targets by index. */
  const created: string[] = [];
  const missingId = newId();
  const answers: Answer[] = [];

  const call = async (operation: () => Promise<RestResult>): Promise<{ status: number; body: unknown }> => {
    try {
      return await operation();
    } catch (error) {
      const mapped = mapError(error);
      return {
        status: mapped.expected ? mapped.httpStatus : 500,
        body: { error: mapped.expected ? mapped.message : 'internal server error' },
      };
    }
  };
  const request = (init: { body?: unknown; params?: Record<string, string>; query?: URLSearchParams; key?: string }): RestRequest => ({
    params: init.params ?? {},
    query: init.query ?? new URLSearchParams(),
    readBody: async () => JSON.stringify(init.body ?? {}),
    client: 'differential',
    signal: new AbortController().signal,
    headers: init.key === undefined ? {} : { 'idempotency-key': init.key },
  });
  const as = (user: number, operation: (principal: Principal) => Promise<RestResult>) => call(() => operation(principals[user]!));
  const remember = (answer: { status: number; body: unknown }): void => {
    const id = (answer.body as { id?: unknown }).id;
    if (answer.status === 201 && typeof id === 'string' && !created.includes(id)) created.push(id);
  };
  const targetId = (target: Target): string => {
    if (target.kind === 'malformed') return 'not-an-order-id';
    const id = target.kind === 'order' ? created[target.index] : undefined;
    if (id === undefined) return missingId;
    return target.kind === 'order' && target.upper ? id.toUpperCase() : id;
  };

  for (const step of steps) {
    let answer: { status: number; body: unknown };
    switch (step.op) {
      case 'login': {
        const password = step.rightPassword ? PASSWORD : `${PASSWORD}-wrong`;
        answer = await call(() => api.login(request({ body: { username: usernames[step.user], password } })));
        const token = (answer.body as { token?: unknown }).token;
        if (typeof token === 'string') principals[step.user] = await authenticate(`Bearer ${token}`, tokens);
        break;
      }
      case 'create':
        answer = await as(step.user, (p) =>
          api.createOrder(request({ body: { item: step.item, quantity: step.quantity }, key: step.key }), p),
        );
        remember(answer);
        break;
      case 'burst': {
        const attempts = Array.from({ length: step.count }, (_, i) => {
          const item = step.key === undefined ? `${step.item} #${i}` : step.item;
          return as(step.user, (p) => api.createOrder(request({ body: { item, quantity: 1 }, key: step.key }), p));
        });
        const all = await Promise.all(attempts);
        all.forEach(remember);
        answer = { status: all[0]!.status, body: all };
        break;
      }
      case 'get':
        answer = await as(step.user, (p) => api.getOrder(request({ params: { id: targetId(step.target) } }), p));
        break;
      case 'list': {
        const query = new URLSearchParams();
        if (step.limit !== undefined) query.set('limit', step.limit);
        if (step.offset !== undefined) query.set('offset', step.offset);
        answer = await as(step.user, (p) => api.listOrders(request({ query }), p));
        break;
      }
      case 'advance':
        clock.advance(step.ms);
        continue;
      case 'announced':
        answer = { status: 0, body: await announcements(backdrop, created) };
        break;
    }
    answers.push({ step: describeStep(step), ...answer });
  }
  await sessions.stop?.();
  return answers;
}

/**
 * Once every order in `ids` has been announced and the broker is idle (or the guard ran out): each order with its
 * count of `order placed` lines, so a redelivery after a lost ack has been handled before the lines are counted.
 */
async function announcements(backdrop: Backdrop, ids: readonly string[]): Promise<Array<[string, number]>> {
  const deadline = performance.now() + ANNOUNCE_GUARD_MS;
  const done = async (): Promise<boolean> => ids.every((id) => backdrop.announced.has(id)) && (await backdrop.idle());
  while (!(await done()) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  return ids.map((id) => [id, backdrop.announced.get(id) ?? 0]);
}

/** A seed's workload on `backdrop` with the seed's clock and ids; usernames carry the run tag and the seed. */
export function runSeed(backdrop: Backdrop, seed: number, runTag: string, length?: number): Promise<Answer[]> {
  return runWorkload({
    backdrop,
    steps: generateWorkload(seed, length),
    clock: new SeedClock(seed),
    newId: seedIds(runTag, seed),
    userPrefix: `diff-${runTag}-${seed}-`,
  });
}

/**
 * A seed's workload on a fresh set of fakes: with the seed's shapes (`shapes`, the default) or the fakes'
 * unseeded defaults; `store` plants another store.
 */
export async function runSeedOnFakes(
  seed: number,
  runTag: string,
  options: {
    readonly shapes?: boolean;
    readonly store?: MemoryStore;
    readonly length?: number;
    /** Told the batches the notifier was handed, once the run stopped. */
    readonly onBatches?: (batches: ReadonlyArray<readonly string[]>) => void;
  } = {},
): Promise<Answer[]> {
  const shapes = options.shapes ?? true;
  const clock = new SeedClock(seed);
  const store = options.store ?? new MemoryStore(shapes ? { seed } : {});
  const { backends, bus } = fakeBackends(clock, store, shapes ? seed : undefined);
  const backdrop = await startBackdrop(backends, () => bus.unacknowledged === 0);
  try {
    return await runSeed(backdrop, seed, runTag, options.length);
  } finally {
    await backdrop.stop();
    options.onBatches?.(backdrop.batches);
  }
}
