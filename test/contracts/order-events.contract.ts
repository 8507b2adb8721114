import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import type { OrderEventPublisher, OrderEventSubscriber } from '../../src/ports/order-events.ts';

export interface OrderEventsUnderTest {
  readonly bus: OrderEventPublisher & OrderEventSubscriber;
  readonly cleanup?: () => Promise<void>;
}

/** How long a test waits for something that should arrive, and for something that should not. */
const ARRIVAL_MS = 3_000;
const QUIET_MS = 200;

function sampleEvent(overrides: Partial<OrderPlaced> = {}): OrderPlaced {
  return {
    order_id: randomUUID(),
    user_id: randomUUID(),
    item: 'widget ✓',
    quantity: 2,
    created_at: '2024-05-06T07:08:09.123Z',
    ...overrides,
  };
}

interface RunningConsumer {
  readonly received: OrderPlaced[];
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

function startConsumer(bus: OrderEventSubscriber): RunningConsumer {
  const received: OrderPlaced[] = [];
  const controller = new AbortController();
  const done = bus.consumeOrderPlaced((event) => {
    received.push(event);
  }, controller.signal);
  return {
    received,
    done,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + ARRIVAL_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** One OrderEventPublisher/Subscriber contract: core NATS semantics, no replay, fan-out to every consumer. */
export function orderEventsContract(implementation: string, make: () => Promise<OrderEventsUnderTest>): void {
  describe(`OrderEvents contract/${implementation}`, () => {
    let subject: OrderEventsUnderTest;
    let consumers: RunningConsumer[];

    const consume = (): RunningConsumer => {
      const consumer = startConsumer(subject.bus);
      consumers.push(consumer);
      return consumer;
    };

    beforeEach(async () => {
      consumers = [];
      subject = await make();
    });

    afterEach(async () => {
      await Promise.all(consumers.map((c) => c.stop()));
      await subject.cleanup?.();
    });

    it('a published event reaches a running consumer with every payload field', async () => {
      const consumer = consume();
      const event = sampleEvent();
      await subject.bus.publishOrderPlaced(event);
      await waitFor(() => consumer.received.length === 1, 'the event');
      expect(consumer.received[0]).toEqual(event);
    });

    it('several events arrive in publish order', async () => {
      const consumer = consume();
      const events = Array.from({ length: 5 }, (_, i) => sampleEvent({ item: `item-${i}`, quantity: i + 1 }));
      for (const event of events) await subject.bus.publishOrderPlaced(event);
      await waitFor(() => consumer.received.length === events.length, 'five events');
      expect(consumer.received).toEqual(events);
    });

    it('consume resolves promptly once the signal aborts (spec 6 rule 4)', async () => {
      const consumer = consume();
      await sleep(20);
      const started = Date.now();
      await consumer.stop();
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('consume with an already aborted signal resolves at once', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(subject.bus.consumeOrderPlaced(() => undefined, controller.signal)).resolves.toBeUndefined();
    });

    it('a consumer started after a publish does not receive the old event (no replay)', async () => {
      const old = sampleEvent({ item: 'old' });
      await subject.bus.publishOrderPlaced(old);
      await sleep(QUIET_MS);
      const consumer = consume();
      const fresh = sampleEvent({ item: 'fresh' });
      await subject.bus.publishOrderPlaced(fresh);
      await waitFor(() => consumer.received.length >= 1, 'the fresh event');
      await sleep(QUIET_MS);
      expect(consumer.received).toEqual([fresh]);
    });

    it('two consumers both receive every event', async () => {
      const first = consume();
      const second = consume();
      const events = [sampleEvent({ item: 'one' }), sampleEvent({ item: 'two' })];
      for (const event of events) await subject.bus.publishOrderPlaced(event);
      await waitFor(() => first.received.length === 2 && second.received.length === 2, 'both consumers');
      expect(first.received).toEqual(events);
      expect(second.received).toEqual(events);
    });

    it('a throwing handler does not stop later deliveries', async () => {
      const received: OrderPlaced[] = [];
      const controller = new AbortController();
      let calls = 0;
      const done = subject.bus.consumeOrderPlaced((event) => {
        calls += 1;
        if (calls === 1) throw new Error('handler exploded');
        received.push(event);
      }, controller.signal);
      try {
        const events = [sampleEvent({ item: 'boom' }), sampleEvent({ item: 'fine' })];
        for (const event of events) await subject.bus.publishOrderPlaced(event);
        await waitFor(() => received.length === 1, 'the second event');
        expect(received).toEqual([events[1]]);
      } finally {
        controller.abort();
        await done;
      }
    });
  });
}
