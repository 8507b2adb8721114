// The test-control API's model (rules CONTROL-*): what a conformance runner needs from an `--embedded`
// instance it judges black-box and cannot reach into: fresh users, what the fakes recorded (published
// events, cache entries, stored rows) and a one-shot fault in a handler's next store read or the tracing layer. Validated
// here, every change logged at warn as `control: …` like the simulator's (rule SIM-logged);
// control-routes.ts puts it on the admin listener, openapi.yaml describes it.
import { randomUUID } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import type { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import type { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import type { MemoryStore } from '../../fakes/memory-store.ts';
import { ErrConflict, ErrNotFound, ErrValidation } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import type { Logger } from '../../src/ports/logger.ts';
import { hashPassword } from '../../src/service/password-hasher.ts';
import type { LogTail } from '../console/log-tail.ts';

/**
 * The log the control API keeps (rule CONTROL-logs): enough lines that a runner polling it every few
 * milliseconds misses none, bounded so that `npm start` left running holds a few MB at most.
 */
export const CONTROL_LOG = { lines: 5_000, maxLineChars: 2_000 } as const;

/** Spec 3.5's login fields are free text; the control API keeps them to a sane size. */
export const MAX_CREDENTIAL_LENGTH = 200;
/**
 * Where a fault may be injected (rule CONTROL-fault): the store reads a handler makes, and `startSpan`, the
 * tracing layer's first step on every request (the outermost layer, rule CHAIN-R1-outermost).
 */
export const FAULT_CALLS = ['findById', 'listByUser', 'startSpan'] as const;
export type FaultCall = (typeof FAULT_CALLS)[number];

/** An order as the control API shows a stored row or a cache entry: the wire's field names (spec 2.1). */
export interface OrderView {
  readonly id: string;
  readonly user_id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

const view = (order: Order): OrderView => ({
  id: order.id,
  user_id: order.userId,
  item: order.item,
  quantity: order.quantity,
  status: order.status,
  created_at: order.createdAt.toISOString(),
});

export class Control {
  readonly #store: MemoryStore;
  readonly #cache: MemoryOrderCache;
  readonly #bus: MemoryEventBus;
  readonly #tracer: Tracer;
  readonly #logger: Logger;
  readonly #log: LogTail | undefined;
  /** Faults armed and not yet fired. */
  readonly #armed = new Set<FaultCall>();

  constructor(
    options: Readonly<{
      store: MemoryStore;
      cache: MemoryOrderCache;
      bus: MemoryEventBus;
      tracer: Tracer;
      logger: Logger;
      /** What the process wrote to stdout, teed by runMain; absent when it does not run as an executable. */
      log?: LogTail | undefined;
    }>,
  ) {
    this.#log = options.log;
    this.#store = options.store;
    this.#cache = options.cache;
    this.#bus = options.bus;
    this.#tracer = options.tracer;
    this.#logger = options.logger;
  }

  /** POST /control/users: a user who can log in at once (rule CONTROL-users); the password is never logged. */
  async provisionUser(body: unknown): Promise<{ id: string; username: string }> {
    const { username, password } = objectOf(body, ['username', 'password']);
    const name = credential(username, 'username');
    const secret = credential(password, 'password');
    const id = randomUUID();
    const passwordHash = await hashPassword(secret);
    try {
      this.#store.seedUser({ id, username: name, passwordHash });
    } catch (error) {
      if (error instanceof ErrConflict) throw new ErrValidation(`username ${name} already exists`);
      throw error;
    }
    this.#logger.warn({ user: name, user_id: id }, 'control: user provisioned');
    return { id, username: name };
  }

  /** GET /control/events: every event the publisher fake accepted, oldest first (rule CONTROL-recorders). */
  events(filter: { orderId?: string | null; userId?: string | null }): { events: readonly OrderPlaced[] } {
    const events = this.#bus.published.filter(
      (e) => (filter.orderId == null || e.order_id === filter.orderId) && (filter.userId == null || e.user_id === filter.userId),
    );
    return { events };
  }

  /** GET /control/cache/{id}: the live cache entry, read past the simulator's switches (rule CONTROL-recorders). */
  cached(id: string): OrderView {
    const order = this.#cache.peek(id);
    if (order === undefined) throw new ErrNotFound();
    return view(order);
  }

  /** GET /control/orders/{id}: the stored row, read past the simulator's switches (rule CONTROL-recorders). */
  stored(id: string): OrderView {
    const order = this.#store.peekOrder(id);
    if (order === undefined) throw new ErrNotFound();
    return view(order);
  }

  /**
   * POST /control/faults: the next call of this store read, or of the tracer's startSpan, throws a
   * programming error (a TypeError, not an outage), once (rule CONTROL-fault): what the service does with a
   * bug in a handler or in a layer (CHAIN-R1-panic, CHAIN-R1-outermost). Arming an armed call changes nothing.
   */
  injectFault(body: unknown): { call: FaultCall; armed: true } {
    const { call } = objectOf(body, ['call']);
    if (!(FAULT_CALLS as readonly unknown[]).includes(call)) throw new ErrValidation(`call must be one of ${FAULT_CALLS.join(', ')}`);
    const name = call as FaultCall;
    if (!this.#armed.has(name)) {
      const owner = (name === 'startSpan' ? this.#tracer : this.#store) as unknown as Record<FaultCall, unknown>;
      const had = Object.hasOwn(owner, name);
      const original = owner[name];
      this.#armed.add(name);
      owner[name] = () => {
        if (had) owner[name] = original;
        else delete owner[name];
        this.#armed.delete(name);
        throw new TypeError(`injected fault: cannot read properties of undefined (control API, ${name})`);
      };
    }
    this.#logger.warn({ call: name }, 'control: fault armed');
    return { call: name, armed: true };
  }

  /**
   * GET /control/logs?after=n: the log lines written after seq n, as they went to stdout, oldest first,
   * and the seq to ask after next (rule CONTROL-logs); 404 when the process's stdout is not teed.
   */
  logs(after: string | null): { lines: readonly string[]; next: number } {
    if (this.#log === undefined) throw new ErrNotFound();
    const from = after === null || after === '' ? 0 : Number(after);
    if (!Number.isSafeInteger(from) || from < 0) throw new ErrValidation('after must be a non-negative integer');
    const lines = this.#log.after(from);
    return { lines: lines.map((l) => l.text), next: lines.at(-1)?.seq ?? from };
  }

  /** GET /control/faults: the faults armed that have not fired yet. */
  faults(): { armed: readonly FaultCall[] } {
    return { armed: [...this.#armed] };
  }
}

function objectOf(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ErrValidation('body must be a JSON object');
  const unknown = Object.keys(body).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new ErrValidation(`unknown field ${unknown}; allowed: ${allowed.join(', ')}`);
  return body as Record<string, unknown>;
}

function credential(value: unknown, name: string): string {
  if (typeof value === 'string' && value !== '' && value.length <= MAX_CREDENTIAL_LENGTH) return value;
  throw new ErrValidation(`${name} must be a string of 1 to ${MAX_CREDENTIAL_LENGTH} characters`);
}
