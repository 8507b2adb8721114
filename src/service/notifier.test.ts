import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import type { Order } from '../domain/order.ts';
import { runComponents } from '../lifecycle/runner.ts';
import { createLogger } from '../observability/logger.ts';
import type { OrderEventSubscriber } from '../ports/order-events.ts';
import { Notifier } from './notifier.ts';

const ORDER: Order = {
  id: '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b',
  userId: '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77',
  item: 'widget',
  quantity: 4,
  status: 'pending',
  createdAt: new Date('2025-01-02T03:04:05.678Z'),
};
const EVENT_ID = '7d0c5a1e-3b2f-4e8a-9c6d-1a2b3c4d5e6f';
const ENVELOPE = {
  id: EVENT_ID,
  event: { order_id: ORDER.id, user_id: ORDER.userId, item: ORDER.item, quantity: 4, created_at: ORDER.createdAt.toISOString() },
};

async function setup() {
  const bus = new MemoryEventBus();
  const store = new MemoryStore();
  await store.place({ order: ORDER, event: ENVELOPE });
  const logs = new LogCapture();
  const notifier = new Notifier(bus, store, createLogger('debug', logs), { drainMs: 500 });
  return { bus, store, logs, notifier };
}

describe('Notifier (spec 6 rules 2, 4; rule EVT-7-delivery)', () => {
  it('a redelivered event (lost ack) is not announced twice, even when another replica gets it', async () => {
    const { store, logs } = await setup();
    // A broker that delivers the same event to both replicas, as JetStream does after a lost ack.
    const redelivering: OrderEventSubscriber = {
      async consumeOrderPlaced(handler) {
        await handler([ENVELOPE]);
      },
      async drainOrderPlaced() {},
    };
    const first = new Notifier(redelivering, store, createLogger('debug', logs));
    const second = new Notifier(redelivering, store, createLogger('debug', logs));
    const signal = new AbortController().signal;
    await Promise.all([first.run(signal), second.run(signal), first.run(signal)]);
    expect(logs.find('order placed')).toHaveLength(1);
  });

  it('a failing ledger leaves the event unacknowledged: it comes back and is announced once the ledger works', async () => {
    const { bus, store, logs, notifier } = await setup();
    store.trouble.down();
    const controller = new AbortController();
    const running = notifier.run(controller.signal);
    await bus.publishOrderPlaced(ENVELOPE);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logs.find('order placed')).toHaveLength(0);
    store.trouble.up();
    await until(() => logs.find('order placed').length === 1, 'the announcement');
    expect(bus.unacknowledged).toBe(0);
    controller.abort();
    await running;
  });

  // Run returning on cancel is the lifecycle-order-and-shutdown conformance case (EVT-4-notifier-stop).
  it('run resolves at once for an already aborted signal', async () => {
    await expect((await setup()).notifier.run(AbortSignal.abort())).resolves.toBeUndefined();
  });

  it('[EVT-4-notifier-stop] stop drains what the relay just published and announces it, within the default budget', async () => {
    const { bus, store, logs } = await setup();
    const notifier = new Notifier(bus, store, createLogger('debug', logs));
    await bus.publishOrderPlaced(ENVELOPE);
    await notifier.stop();
    expect(logs.find('order placed')).toMatchObject([{ level: 'info', order_id: ORDER.id, user_id: ORDER.userId, item: 'widget' }]);
    expect(bus.unacknowledged).toBe(0);
  });

  it.each([
    ['the drainMs option', { drainMs: 250 }, 250],
    ['3 s (NOTIFIER_DRAIN_MS) by default', {}, 3_000],
  ])('[EVT-4-notifier-stop] the stop-time drain is bounded by %s', async (_label, options, bound) => {
    const bounds: number[] = [];
    const subscriber: OrderEventSubscriber = {
      async consumeOrderPlaced() {},
      async drainOrderPlaced(_handler, timeoutMs) {
        bounds.push(timeoutMs);
      },
    };
    await new Notifier(subscriber, new MemoryStore(), createLogger('error', new LogCapture()), options).stop();
    expect(bounds).toStrictEqual([bound]);
  });

  it('a failed stop-time drain is reported by the runner under the component name `notifier`', async () => {
    const logs = new LogCapture();
    const subscriber: OrderEventSubscriber = {
      async consumeOrderPlaced() {},
      async drainOrderPlaced() {
        throw new Error('consumer gone');
      },
    };
    const logger = createLogger('debug', logs);
    await runComponents([new Notifier(subscriber, new MemoryStore(), logger)], AbortSignal.abort(), logger);
    expect(logs.find('lifecycle: stop failed')).toMatchObject([{ level: 'error', component: 'notifier', err: 'consumer gone' }]);
  });
});
