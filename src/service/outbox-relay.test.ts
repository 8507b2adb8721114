import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { until } from '../../test/support/eventually.ts';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { ErrUnavailable } from '../domain/errors.ts';
import type { Order } from '../domain/order.ts';
import { createLogger } from '../observability/logger.ts';
import type { OrderEventPublisher } from '../ports/order-events.ts';
import type { OutboxStore } from '../ports/outbox.ts';
import { OutboxRelay, type OutboxRelayOptions } from './outbox-relay.ts';

const FAST: OutboxRelayOptions = { pollMs: 5, backoffInitialMs: 10, backoffMaxMs: 40, sampleMs: 10 };

async function place(store: MemoryStore, n: number, createdAt = new Date()): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const order: Order = { id: randomUUID(), userId: 'u', item: `item-${i}`, quantity: 1, status: 'pending', createdAt };
    const id = randomUUID();
    await store.place({
      order,
      event: { id, event: { order_id: order.id, user_id: 'u', item: order.item, quantity: 1, created_at: createdAt.toISOString() } },
    });
    ids.push(id);
  }
  return ids;
}

type Setup = ReturnType<typeof setup>;

/** The sampler's and purger's cadence in the stepped tests: long enough never to come round. */
const IDLE_MS = 3_600_000;

/**
 * The relay's timers on a stepped monotonic clock: a wait shorter than IDLE_MS ends at once, moves the
 * clock by its length and is recorded (then `onWait` sees it, and may change the world or abort the
 * run); an IDLE_MS wait (sampler, purger) lasts until its signal aborts. No real time passes.
 */
class SteppedTimers extends FakeTimers {
  readonly waits: number[] = [];
  readonly #onWait: (ms: number) => void;

  constructor(onWait: (ms: number) => void = () => undefined) {
    super();
    this.#onWait = onWait;
  }

  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms >= IDLE_MS) {
      if (signal !== undefined && !signal.aborted)
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return;
    }
    this.waits.push(ms);
    this.advance(ms);
    this.#onWait(ms);
  }
}

/** A relay on stepped timers, with the jitter pinned at its middle (factor 1.0) unless a test pins it elsewhere. */
function stepped(onWait: (ms: number) => void, options: OutboxRelayOptions = {}) {
  const timers = new SteppedTimers(onWait);
  return { timers, ...setup({ backoffInitialMs: 100, backoffMaxMs: 2_000, sampleMs: IDLE_MS, purgeEveryMs: IDLE_MS, timers, ...options }) };
}

function setup(options: OutboxRelayOptions = {}) {
  const store = new MemoryStore();
  const bus = new MemoryEventBus();
  const logs = new LogCapture();
  const relay = new OutboxRelay(store, bus, createLogger('debug', logs), { ...FAST, ...options });
  return { store, bus, logs, relay };
}

describe('OutboxRelay (rule EVT-7-delivery)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('publishes every pending event once, in outbox order, and marks it sent', async () => {
    const { store, bus, relay } = setup({ batchSize: 7 });
    const ids = await place(store, 20);
    const controller = new AbortController();
    const running = relay.run(controller.signal);
    await until(() => store.pendingEvents().length === 0, 'an empty outbox');
    controller.abort();
    await running;
    expect(bus.published.map((e) => e.item)).toStrictEqual(ids.map((_, i) => `item-${i}`));
    expect(bus.duplicates).toBe(0);
  });

  it.each([
    ['the broker', 'outbox relay: publish failed', (s: Setup) => s.bus.trouble, { failed: 5, published: 0 }],
    ['the database', 'outbox relay: outbox unavailable', (s: Setup) => s.store.trouble, {}],
  ])('retries with backoff while %s is down, logs `%s`, and delivers everything after', async (_label, message, trouble, fields) => {
    const s = setup();
    await place(s.store, 5);
    trouble(s).down('stalled');
    const controller = new AbortController();
    const running = s.relay.run(controller.signal);
    await until(() => s.logs.find(message).length >= 2, 'two failed rounds');
    expect(s.bus.published).toHaveLength(0);
    expect(s.logs.find(message)[0]).toMatchObject({ level: 'warn', err: expect.stringContaining('stalled'), ...fields });
    trouble(s).up();
    await until(() => s.store.pendingEvents().length === 0, 'the outbox to empty');
    expect(s.bus.published).toHaveLength(5);
    expect(s.logs.find('outbox relay: publishing again')).toHaveLength(1);
    controller.abort();
    await running;
  });

  it('a partly acknowledged batch keeps the rest pending; the broker stores each event once', async () => {
    const { store, bus, relay } = setup();
    await place(store, 4);
    let calls = 0;
    const flaky: OrderEventPublisher = {
      async publishOrderPlaced(envelope) {
        calls += 1;
        if (calls === 2) throw new ErrUnavailable('publisher: publish: timeout');
        await bus.publishOrderPlaced(envelope);
      },
    };
    const partial = new OutboxRelay(store, flaky, createLogger('debug', new LogCapture()), FAST);
    expect(await partial.relayOnce()).toBe('failed');
    expect(store.pendingEvents()).toHaveLength(1);
    expect(await relay.relayOnce()).toBe('partial');
    expect(store.pendingEvents()).toHaveLength(0);
    expect(bus.published).toHaveLength(4);
  });

  // Stop flushing what the API wrote last is the stop-order test in create-app.test.ts, over the real composition.
  it('events the stop flush cannot publish stay for the next process', async () => {
    const { store, bus, relay } = setup();
    await place(store, 2);
    bus.trouble.down();
    await relay.stop();
    expect(store.pendingEvents()).toHaveLength(2);
    bus.trouble.up();
    await new OutboxRelay(store, bus, createLogger('debug', new LogCapture()), FAST).stop();
    expect(bus.published).toHaveLength(2);
  });

  it.each([
    [
      'count',
      { unhealthyPending: 3, unhealthyAgeMs: 60_000 },
      3,
      0,
      /^publisher: outbox backlog: 3 events pending, oldest \d+\.\d s old \(limits 3 events, 60 s\)$/,
    ],
    [
      'age',
      { unhealthyPending: 100, unhealthyAgeMs: 1_000 },
      1,
      5_000,
      /^publisher: outbox backlog: 1 events pending, oldest \d+\.\d s old \(limits 100 events, 1 s\)$/,
    ],
  ])('health fails past the backlog %s threshold and says so; stats feed the metrics', async (_label, limits, events, ageMs, message) => {
    const { store, bus, relay } = setup(limits);
    bus.trouble.down();
    const controller = new AbortController();
    const running = relay.run(controller.signal);
    await until(() => relay.stats().pending === 0, 'the first sample');
    await expect(relay.backlogHealth()).resolves.toBeUndefined();
    await place(store, events, new Date(Date.now() - ageMs));
    await until(() => relay.stats().pending === events, 'a sample of the backlog');
    expect(relay.stats().oldestAgeSeconds).toBeGreaterThanOrEqual(ageMs / 1000);
    await expect(relay.backlogHealth()).rejects.toThrow(message);
    controller.abort();
    await running;
  });

  it('a round says `full` when it claimed a whole batch (more may wait) and `partial` otherwise', async () => {
    const { store, bus, relay } = setup({ batchSize: 2 });
    await place(store, 3);
    expect(await relay.relayOnce()).toBe('full');
    expect(await relay.relayOnce()).toBe('partial');
    expect(await relay.relayOnce()).toBe('partial');
    expect(bus.published).toHaveLength(3);
  });

  it('an empty claim is a `partial` round even when the store, like PostgresOutbox, then never calls send', async () => {
    const logs = new LogCapture();
    const empty: OutboxStore = {
      relayPending: () => Promise.resolve({ claimed: 0, sent: 0 }),
      backlog: () => Promise.resolve({ pending: 0, oldestCreatedAt: undefined }),
      purge: () => Promise.resolve(0),
    };
    const relay = new OutboxRelay(empty, new MemoryEventBus(), createLogger('debug', logs), FAST);
    expect(await relay.relayOnce()).toBe('partial');
    expect(logs.lines).toHaveLength(0);
  });

  it('[EVT-3-service-logs] a relay that never failed logs nothing while it publishes', async () => {
    const { store, bus, logs, relay } = setup();
    await place(store, 3);
    expect(await relay.relayOnce()).toBe('partial');
    expect(bus.published).toHaveLength(3);
    expect(logs.lines).toHaveLength(0);
  });

  it('[EVT-3-service-logs] `publishing again` is logged once, on the first round after a failing streak that publishes something', async () => {
    const { store, logs, relay } = setup();
    store.trouble.down('stalled');
    expect(await relay.relayOnce()).toBe('failed');
    expect(logs.find('outbox relay: outbox unavailable')).toMatchObject([
      { level: 'warn', component: 'relay', err: expect.stringContaining('stalled') },
    ]);
    store.trouble.up();
    // Back, but nothing pending: nothing was published again yet.
    expect(await relay.relayOnce()).toBe('partial');
    expect(logs.find('outbox relay: publishing again')).toHaveLength(0);
    await place(store, 2);
    expect(await relay.relayOnce()).toBe('partial');
    expect(logs.find('outbox relay: publishing again')).toMatchObject([{ level: 'info', component: 'relay', published: 2 }]);
    await place(store, 1);
    expect(await relay.relayOnce()).toBe('partial');
    expect(logs.find('outbox relay: publishing again')).toHaveLength(1);
  });

  it('[EVT-3-service-logs] a partly failed round logs one warning with the counts and the first failure; stats count both sides', async () => {
    const { store, bus, logs } = setup();
    const ids = await place(store, 4);
    const failedOrder = store.pendingEvents()[1]?.event.order_id;
    let calls = 0;
    const flaky: OrderEventPublisher = {
      async publishOrderPlaced(envelope) {
        calls += 1;
        if (calls === 2) throw new ErrUnavailable('publisher: publish: timeout');
        await bus.publishOrderPlaced(envelope);
      },
    };
    const relay = new OutboxRelay(store, flaky, createLogger('debug', logs), FAST);
    expect(await relay.relayOnce()).toBe('failed');
    expect(logs.find('outbox relay: publish failed')).toMatchObject([
      {
        level: 'warn',
        component: 'relay',
        failed: 1,
        published: 3,
        event_id: ids[1],
        order_id: failedOrder,
        err: 'publisher: publish: timeout',
      },
    ]);
    expect(relay.stats()).toMatchObject({ published: 3, publishFailures: 1 });
    expect(await relay.relayOnce()).toBe('partial');
    expect(relay.stats()).toMatchObject({ published: 4, publishFailures: 1 });
  });

  it('backoff doubles from backoffInitialMs up to backoffMaxMs while the broker is down', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const controller = new AbortController();
    const { store, bus, timers, relay } = stepped(() => timers.waits.length === 7 && controller.abort(), {
      backoffInitialMs: 100,
      backoffMaxMs: 2_000,
    });
    await place(store, 1);
    bus.trouble.down();
    await relay.run(controller.signal);
    expect(timers.waits).toStrictEqual([100, 200, 400, 800, 1_600, 2_000, 2_000]);
  });

  it.each([
    [0, 80],
    [0.5, 100],
    [0.99999, 120],
  ])('backoff jitter stays within 0.8-1.2 times the base: Math.random() = %s gives %s ms on a 100 ms base', async (random, delay) => {
    vi.spyOn(Math, 'random').mockReturnValue(random);
    const controller = new AbortController();
    const { store, bus, timers, relay } = stepped(() => controller.abort(), { backoffInitialMs: 100 });
    await place(store, 1);
    bus.trouble.down();
    await relay.run(controller.signal);
    expect(timers.waits).toStrictEqual([delay]);
  });

  it('a full round goes straight on, a partial one waits pollMs, and a success resets the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const controller = new AbortController();
    const seen: Array<[number, number]> = [];
    const { store, bus, relay } = stepped(
      (ms) => {
        seen.push([ms, bus.published.length]);
        if (seen.length === 2) bus.trouble.up();
        if (seen.length === 3) store.trouble.down();
        if (seen.length === 4) controller.abort();
      },
      { batchSize: 2, pollMs: 50, backoffInitialMs: 100 },
    );
    await place(store, 5);
    bus.trouble.down();
    await relay.run(controller.signal);
    // Two failed rounds (100, 200); once the broker is back full, full, partial (all 5 out) and pollMs;
    // then a database failure backs off from 100 again.
    expect(seen).toStrictEqual([
      [100, 0],
      [200, 0],
      [50, 5],
      [100, 5],
    ]);
  });

  it('run resolves only after the sample and the purge in flight settle; the purge asks for keys expired at the relay clock now', async () => {
    const { store } = setup();
    const clock = new FakeTimers();
    clock.advance(86_400_000);
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const purges: number[] = [];
    const outbox: OutboxStore = {
      relayPending: (limit, send) => store.relayPending(limit, send),
      backlog: () => store.backlog(),
      async purge(now) {
        purges.push(now.getTime());
        await gate;
        return store.purge(now);
      },
    };
    const controller = new AbortController();
    const timers = new SteppedTimers(() => controller.abort());
    const relay = new OutboxRelay(outbox, new MemoryEventBus(), createLogger('debug', new LogCapture()), {
      ...FAST,
      sampleMs: IDLE_MS,
      purgeEveryMs: IDLE_MS,
      clock,
      timers,
    });
    let returned = false;
    const running = relay.run(controller.signal).then(() => (returned = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(controller.signal.aborted).toBe(true);
    expect(purges).toStrictEqual([86_400_000]);
    expect(returned).toBe(false);
    release();
    await running;
    expect(relay.stats().pending).toBe(0);
  });

  it('[EVT-7-delivery] stats and health measure the oldest pending event on the relay clock; 10 s old or more is unhealthy', async () => {
    const clock = new FakeTimers();
    clock.advance(86_400_000);
    const controller = new AbortController();
    const { store, bus, relay } = stepped(() => controller.abort(), { clock });
    await place(store, 2, clock.now());
    bus.trouble.down();
    await relay.run(controller.signal);
    clock.advance(4_000);
    expect(relay.stats()).toStrictEqual({ pending: 2, oldestAgeSeconds: 4, published: 0, publishFailures: 2 });
    clock.advance(5_999);
    await expect(relay.backlogHealth()).resolves.toBeUndefined();
    clock.advance(1);
    await expect(relay.backlogHealth()).rejects.toThrow(
      new ErrUnavailable('publisher: outbox backlog: 2 events pending, oldest 10.0 s old (limits 10000 events, 10 s)'),
    );
  });

  it('the stop flush goes on through full batches and returns after the partial one, without waiting', async () => {
    const { store, bus, timers, relay } = stepped(() => undefined, { batchSize: 2 });
    await place(store, 5);
    await relay.stop();
    expect(bus.published).toHaveLength(5);
    expect(timers.waits).toStrictEqual([]);
  });

  it('the stop flush tries a down broker three times, backing off in between, then leaves the events', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { store, logs, bus, timers, relay } = stepped(() => undefined, { backoffInitialMs: 100 });
    await place(store, 2);
    bus.trouble.down();
    await relay.stop();
    expect(logs.find('outbox relay: publish failed')).toHaveLength(3);
    expect(timers.waits).toStrictEqual([100, 200]);
    expect(store.pendingEvents()).toHaveLength(2);
  });

  it('the stop flush ends at flushTimeoutMs: the last backoff is cut to what is left of it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { store, logs, bus, timers, relay } = stepped(() => undefined, { backoffInitialMs: 80, flushTimeoutMs: 100 });
    await place(store, 1);
    bus.trouble.down();
    await relay.stop();
    expect(timers.waits).toStrictEqual([80, 20]);
    expect(logs.find('outbox relay: publish failed')).toHaveLength(2);
  });
});
