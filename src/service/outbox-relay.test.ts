import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { ErrUnavailable } from '../domain/errors.ts';
import type { Order } from '../domain/order.ts';
import { createLogger } from '../observability/logger.ts';
import type { OrderEventPublisher } from '../ports/order-events.ts';
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

function setup(options: OutboxRelayOptions = {}) {
  const store = new MemoryStore();
  const bus = new MemoryEventBus();
  const logs = new LogCapture();
  const relay = new OutboxRelay(store, bus, createLogger('debug', logs), { ...FAST, ...options });
  return { store, bus, logs, relay };
}

describe('OutboxRelay (rule EVT-7-delivery)', () => {
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
});
