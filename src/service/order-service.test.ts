import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { ErrForbidden, ErrInvalidOrderId, ErrUnavailable, ErrValidation } from '../domain/errors.ts';
import { IDEMPOTENCY_KEY_TTL_MS } from '../domain/idempotency-key.ts';
import type { Order } from '../domain/order.ts';
import type { OrderPlaced } from '../domain/order-placed.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import type { Placement } from '../ports/order-repository.ts';
import { SessionScope } from '../session/scope.ts';
import type { Principal } from './authenticate.ts';
import { OrderService, pageOf, type CallContext, type OrderServiceDeps } from './order-service.ts';

const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
const NOW = new Date('2025-04-05T06:07:08.009Z');

function principal(userId: string): Principal {
  return {
    userId,
    claims: { sub: userId, name: userId === ALICE ? 'alice' : 'bob', iat: 0, exp: 0 },
    sessionKey: sessionKeyFromVerifiedSubject(userId),
  };
}

function ctx(userId: string, signal: AbortSignal = new AbortController().signal): CallContext {
  return { principal: principal(userId), signal };
}

let idCounter = 0;
function nextId(): string {
  idCounter += 1;
  return `00000000-0000-4000-8000-${String(idCounter).padStart(12, '0')}`;
}

interface Harness {
  readonly service: OrderService;
  readonly store: MemoryStore;
  readonly cache: MemoryOrderCache;
  readonly bus: MemoryEventBus;
  readonly sessions: SessionScope;
  /** Only the order service's own log lines (the session scope logs elsewhere). */
  readonly logs: LogCapture;
}

function harness(options: { deps?: (base: OrderServiceDeps) => Partial<OrderServiceDeps> } = {}): Harness {
  const store = new MemoryStore();
  const cache = new MemoryOrderCache();
  const bus = new MemoryEventBus();
  const logs = new LogCapture();
  const sessions = new SessionScope({ recentCapacity: 10, logger: createLogger('debug', new LogCapture()) });
  const base: OrderServiceDeps = {
    repository: store,
    cache,
    sessions,
    logger: createLogger('debug', logs),
    clock: { now: () => NOW },
    newId: nextId,
  };
  const service = new OrderService({ ...base, ...options.deps?.(base) });
  return { service, store, cache, bus, sessions, logs };
}

/** Lets the fire-and-forget cache refill of a read settle. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function storedOrder(userId: string, overrides: Partial<Order> = {}): Order {
  return { id: nextId(), userId, item: 'stored', quantity: 2, status: 'pending', createdAt: NOW, ...overrides };
}

describe('OrderService construction', () => {
  it.each(['repository', 'cache', 'sessions', 'logger'] as const)('rejects a missing %s', (name) => {
    const deps = {
      repository: new MemoryStore(),
      cache: new MemoryOrderCache(),
      sessions: new SessionScope({ recentCapacity: 1, logger: createLogger('debug', new LogCapture()) }),
      logger: createLogger('debug', new LogCapture()),
    };
    expect(() => new OrderService({ ...deps, [name]: undefined } as unknown as OrderServiceDeps)).toThrow(name);
  });
});

describe('OrderService.create (transactional outbox, rule EVT-7-delivery)', () => {
  it('places the order with its event in one call, then caches; it never touches the broker', async () => {
    const { service, store, cache, bus } = harness();
    const effects: string[] = [];
    const placements: Placement[] = [];
    /** Wraps `method` of `target` to record when it starts and when it has finished. */
    function journal<T extends object, K extends keyof T & string>(target: T, method: K, name: string): void {
      const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
      Object.assign(target, {
        [method]: async (...args: unknown[]) => {
          effects.push(`${name}:start`);
          if (name === 'place') placements.push(args[0] as Placement);
          const result = await original(...args);
          effects.push(`${name}:done`);
          return result;
        },
      });
    }
    journal(store, 'place', 'place');
    journal(cache, 'set', 'cache');
    bus.trouble.down(); // the request must not care
    const order = await service.create(ctx(ALICE), 'widget', 3);
    expect(order).toMatchObject({ userId: ALICE, item: 'widget', quantity: 3, status: 'pending', createdAt: NOW });
    expect(effects).toStrictEqual(['place:start', 'place:done', 'cache:start', 'cache:done']);
    expect(await store.findById(order.id)).toStrictEqual(order);
    expect(await cache.get(order.id)).toStrictEqual(order);
    expect(placements).toHaveLength(1);
    expect(placements[0]?.idempotency).toBeUndefined();
    expect(placements[0]?.event.id).not.toBe(order.id);
    const pending = store.pendingEvents();
    expect(pending).toStrictEqual([
      {
        id: placements[0]?.event.id,
        event: { order_id: order.id, user_id: ALICE, item: 'widget', quantity: 3, created_at: NOW.toISOString() } satisfies OrderPlaced,
      },
    ]);
    expect(bus.published).toHaveLength(0);
  });

  it('a store failure fails the create; neither order nor event is written, nothing cached or logged', async () => {
    const { service, store, cache, logs } = harness();
    store.trouble.failNext(1);
    await expect(service.create(ctx(ALICE), 'widget', 1)).rejects.toBeInstanceOf(ErrUnavailable);
    expect(await store.listByUser(ALICE, { limit: 100, offset: 0 })).toHaveLength(0);
    expect(store.pendingEvents()).toHaveLength(0);
    expect(cache.size).toBe(0);
    expect(logs.lines).toHaveLength(0);
  });
});

describe('OrderService.create with an Idempotency-Key (rules IDEM-*)', () => {
  // Same key and body answering the original order, nothing new written: retry-with-same-key-…, replay-publishes-no-second-event.
  it('quoted and bare forms name one key; a replay does not rewrite the cache or log', async () => {
    const { service, store, cache, logs } = harness();
    const first = await service.create(ctx(ALICE), 'widget', 2, { idempotencyKey: '"retry-1"' });
    cache.trouble.down();
    expect(await service.create(ctx(ALICE), 'widget', 2, { idempotencyKey: 'retry-1' })).toStrictEqual(first);
    expect(store.pendingEvents()).toHaveLength(1);
    expect(logs.lines).toHaveLength(0);
  });

  it('[IDEM-expiry] a key expires after 24 hours: then it creates a new order', async () => {
    let now = NOW.getTime();
    const { service } = harness({ deps: () => ({ clock: { now: () => new Date(now) } }) });
    const first = await service.create(ctx(ALICE), 'widget', 2, { idempotencyKey: '"day"' });
    now += IDEMPOTENCY_KEY_TTL_MS - 1;
    expect((await service.create(ctx(ALICE), 'widget', 2, { idempotencyKey: '"day"' })).id).toBe(first.id);
    now += 1;
    expect((await service.create(ctx(ALICE), 'widget', 2, { idempotencyKey: '"day"' })).id).not.toBe(first.id);
  });

  it.each<[string, number, string | undefined, RegExp]>([
    ['quantity 0', 0, undefined, /^quantity must be a positive integer$/],
    ...['', '""', '"unterminated', 'has space', '"tab\there"', `"${'x'.repeat(256)}"`, '"a", "b"'].map(
      (key): [string, number, string, RegExp] => [`key ${JSON.stringify(key)}`, 2, key, /^invalid Idempotency-Key header/],
    ),
  ])('%s is ErrValidation before any backend is touched', async (_label, quantity, idempotencyKey, message) => {
    const { service, store, cache } = harness();
    const error = await service
      .create(ctx(ALICE), 'widget', quantity, idempotencyKey === undefined ? undefined : { idempotencyKey })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrValidation);
    expect((error as Error).message).toMatch(message);
    expect(await store.listByUser(ALICE, { limit: 100, offset: 0 })).toHaveLength(0);
    expect(store.pendingEvents()).toHaveLength(0);
    expect(cache.size).toBe(0);
  });
});

describe('OrderService.get', () => {
  it("another user's order is ErrForbidden, not ErrNotFound (spec 7 rule 1), from the cache and from the repository", async () => {
    const { service, store } = harness();
    const cached = await service.create(ctx(ALICE), 'widget', 1);
    const uncached = storedOrder(ALICE);
    await store.insert(uncached);
    for (const id of [cached.id, uncached.id]) {
      const error = await service.get(ctx(BOB), id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrForbidden);
      expect((error as Error).message).toBe('forbidden');
    }
  });

  it('an id that is not a UUID is ErrInvalidOrderId before any backend is asked (spec 7 rule 1)', async () => {
    const { service, store, cache } = harness();
    store.trouble.down();
    cache.trouble.down();
    for (const id of ['', 'not-a-uuid', "1' OR '1'='1", '99999999-9999-4999-8999-99999999999']) {
      const error = await service.get(ctx(ALICE), id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrInvalidOrderId);
      expect((error as Error).message).toBe('invalid order id');
    }
  });

  it('a repository outage fails a read on a cache miss and a list', async () => {
    const { service, store } = harness();
    store.trouble.down();
    await expect(service.get(ctx(ALICE), '99999999-9999-4999-8999-999999999999')).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(service.list(ctx(ALICE))).rejects.toBeInstanceOf(ErrUnavailable);
  });
});

// OrderService.recent passes the session scope's acquire errors on: ErrScopeFull is the session-cap-reached
// conformance case (RECENT-503), all three the tagged SESSION-no-key… case in session-scope.test.ts.

describe('OrderService logging (spec 6 rule 3)', () => {
  it('logs nothing on the success paths, a read served from the store while the cache is down included', async () => {
    const { service, store, cache, logs } = harness();
    const order = await service.create(ctx(ALICE), 'widget', 1);
    await service.get(ctx(ALICE), order.id);
    await service.list(ctx(ALICE));
    service.recent(ctx(ALICE));
    const uncached = storedOrder(ALICE);
    await store.insert(uncached);
    cache.trouble.down();
    expect(await service.get(ctx(ALICE), uncached.id)).toStrictEqual(uncached);
    await settle();
    expect(logs.lines).toStrictEqual([]);
  });

  it('[EVT-3-service-logs] a failed cache write on create is logged once, at warn, with the order and the cause; the create still succeeds', async () => {
    const { service, store, cache, logs } = harness();
    cache.trouble.failNext(1, 'READONLY replica');
    const order = await service.create(ctx(ALICE), 'widget', 1);
    expect(await store.findById(order.id)).toStrictEqual(order);
    expect(logs.lines).toHaveLength(1);
    expect(logs.lines[0]).toMatchObject({
      level: 'warn',
      msg: 'order service: cache write failed',
      order_id: order.id,
      err: 'cache: set: READONLY replica',
    });
  });
});

// The clamps as a transport hands the numbers over (spec 4.1 rule 6): REST after parsing its query
// (http/rest/dto.test.ts has the spellings), gRPC straight from the message, where an absent field is 0.
describe('OrderService.list: the page (spec 4.1 rule 6)', () => {
  it.each([
    [undefined, undefined, { limit: 20, offset: 0 }],
    [0, 0, { limit: 20, offset: 0 }],
    [1, 1, { limit: 1, offset: 1 }],
    [100, 30, { limit: 100, offset: 30 }],
    [101, -1, { limit: 20, offset: 0 }],
    [-5, -0, { limit: 20, offset: 0 }],
    [2.5, 2.5, { limit: 20, offset: 0 }],
    [Number.NaN, Number.POSITIVE_INFINITY, { limit: 20, offset: 0 }],
  ])('limit %s, offset %s → %o', (limit, offset, page) => {
    expect(pageOf(limit, offset)).toStrictEqual(page);
    expect(Object.is(pageOf(limit, offset).offset, -0)).toBe(false);
  });

  it('asks the repository for the clamped page of the caller’s own orders', async () => {
    const { service, store } = harness();
    const asked: unknown[] = [];
    const listByUser = store.listByUser.bind(store);
    store.listByUser = (userId, page) => (asked.push([userId, page]), listByUser(userId, page));
    await service.list(ctx(ALICE), 500, -3);
    await service.list(ctx(ALICE), 5, 10);
    expect(asked).toStrictEqual([
      [ALICE, { limit: 20, offset: 0 }],
      [ALICE, { limit: 5, offset: 10 }],
    ]);
  });
});
