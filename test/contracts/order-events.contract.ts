import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import type { OrderEventPublisher, OrderEventSubscriber, OrderPlacedEnvelope, OrderPlacedHandler } from '../../src/ports/order-events.ts';
import { until } from '../support/eventually.ts';

export interface OrderEventsUnderTest {
  readonly bus: OrderEventPublisher & OrderEventSubscriber;
  readonly cleanup?: () => Promise<void>;
}

/** How long a test waits for something that should arrive (a redelivery takes ~1 s on JetStream), and for something that should not. */
const ARRIVAL_MS = 5_000;
const QUIET_MS = 300;

export function sampleEnvelope(overrides: Partial<OrderPlaced> = {}): OrderPlacedEnvelope {
  return {
    id: randomUUID(),
    event: {
      order_id: randomUUID(),
      user_id: randomUUID(),
      item: 'widget ✓',
      quantity: 2,
      created_at: '2024-05-06T07:08:09.123Z',
      ...overrides,
    },
  };
}

interface RunningConsumer {
  readonly received: OrderPlacedEnvelope[];
  stop(): Promise<void>;
}

const waitFor = (condition: () => boolean, what: string): Promise<number> => until(condition, what, ARRIVAL_MS);

/**
 * One OrderEventPublisher/Subscriber contract (JetStream semantics): a stream that stores
 * each id once, one durable consumer shared by every consume call, acknowledgement after the
 * handler, redelivery on failure.
 */
export function orderEventsContract(implementation: string, make: () => Promise<OrderEventsUnderTest>): void {
  describe(`OrderEvents contract/${implementation}`, () => {
    let subject: OrderEventsUnderTest;
    let consumers: RunningConsumer[];

    const consume = (handler?: OrderPlacedHandler): RunningConsumer => {
      const received: OrderPlacedEnvelope[] = [];
      const controller = new AbortController();
      const done = subject.bus.consumeOrderPlaced(handler ?? ((batch) => void received.push(...batch)), controller.signal);
      const consumer: RunningConsumer = {
        received,
        stop: async () => {
          controller.abort();
          await done;
        },
      };
      consumers.push(consumer);
      return consumer;
    };

    beforeEach(async () => {
      consumers = [];
      subject = await make();
    });

    // Every consumer a case started resolves once its signal aborts (spec 6 rule 4), or the hook times out.
    afterEach(async () => {
      await Promise.all(consumers.map((c) => c.stop()));
      await subject.cleanup?.();
    });

    it('published events reach a running consumer in publish order, each with its id and every payload field', async () => {
      const consumer = consume();
      const envelopes = Array.from({ length: 5 }, (_, i) => sampleEnvelope({ item: `item-${i}`, quantity: i + 1 }));
      for (const envelope of envelopes) await subject.bus.publishOrderPlaced(envelope);
      await waitFor(() => consumer.received.length === envelopes.length, 'five events');
      expect(consumer.received).toEqual(envelopes);
    });

    it('publishing the same id twice stores and delivers it once (broker-side deduplication)', async () => {
      const consumer = consume();
      const envelope = sampleEnvelope({ item: 'twice' });
      await subject.bus.publishOrderPlaced(envelope);
      await subject.bus.publishOrderPlaced(envelope);
      const next = sampleEnvelope({ item: 'next' });
      await subject.bus.publishOrderPlaced(next);
      await waitFor(() => consumer.received.length >= 2, 'two events');
      await sleep(QUIET_MS);
      expect(consumer.received.map((e) => e.event.item)).toEqual(['twice', 'next']);
    });

    it('an event published while nobody consumed is delivered once a consumer starts (durable)', async () => {
      const early = sampleEnvelope({ item: 'early' });
      await subject.bus.publishOrderPlaced(early);
      await sleep(QUIET_MS);
      const consumer = consume();
      await waitFor(() => consumer.received.length === 1, 'the early event');
      expect(consumer.received).toEqual([early]);
    });

    it('two consumers share the stream: every event goes to exactly one of them', async () => {
      const first = consume();
      const second = consume();
      const envelopes = Array.from({ length: 40 }, (_, i) => sampleEnvelope({ item: `shared-${i}` }));
      for (const envelope of envelopes) await subject.bus.publishOrderPlaced(envelope);
      await waitFor(() => first.received.length + second.received.length === envelopes.length, 'all events');
      await sleep(QUIET_MS);
      const ids = [...first.received, ...second.received].map((e) => e.id).sort();
      expect(ids).toEqual(envelopes.map((e) => e.id).sort());
    });

    it('a throwing handler does not acknowledge: the event comes again, and later events still arrive', async () => {
      const seen: string[] = [];
      let failures = 0;
      consume((batch) => {
        for (const { event } of batch) {
          if (event.item === 'boom' && failures === 0) {
            failures += 1;
            throw new Error('handler exploded');
          }
          seen.push(event.item);
        }
      });
      await subject.bus.publishOrderPlaced(sampleEnvelope({ item: 'boom' }));
      await subject.bus.publishOrderPlaced(sampleEnvelope({ item: 'fine' }));
      await waitFor(() => seen.includes('boom') && seen.includes('fine'), 'the redelivered event and the next one');
      expect(seen.filter((item) => item === 'boom')).toHaveLength(1);
    });

    it('drain delivers what is pending and resolves once nothing is left', async () => {
      const envelopes = [sampleEnvelope({ item: 'd1' }), sampleEnvelope({ item: 'd2' })];
      for (const envelope of envelopes) await subject.bus.publishOrderPlaced(envelope);
      const received: OrderPlacedEnvelope[] = [];
      await subject.bus.drainOrderPlaced((batch) => void received.push(...batch), ARRIVAL_MS);
      expect(received).toEqual(envelopes);
    });

    it('consume with an already aborted signal resolves at once', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(subject.bus.consumeOrderPlaced(() => undefined, controller.signal)).resolves.toBeUndefined();
    });
  });
}
