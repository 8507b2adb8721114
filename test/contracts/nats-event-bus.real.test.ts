import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsConfigFromEnv, type NatsConfig } from '../../src/adapters/nats/config.ts';
import { jetstreamPublisher, NatsEventBus, type StreamPublisherFactory } from '../../src/adapters/nats/event-bus.ts';
import { sharedReplyPublisher } from '../../speed/stream-acks.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { OrderPlacedEnvelope } from '../../src/ports/order-events.ts';
import { until } from '../support/eventually.ts';
import { orderEventsContract, sampleEnvelope } from './order-events.contract.ts';

const NATS_URL = process.env.NATS_URL;
const silent = pino({ enabled: false });

// Missing, never echoing a malformed value, and the default subject: src/config/rules.test.ts.

// Both ways to publish: js.publish (the default) and the shared reply subscription composition chooses.
const PUBLISHERS: readonly (readonly [string, StreamPublisherFactory])[] = [
  ['js.publish', jetstreamPublisher],
  ['one reply subscription', sharedReplyPublisher],
];

for (const [publisherName, streamPublisher] of PUBLISHERS)
  describe.skipIf(!NATS_URL)(`NatsEventBus against NATS_URL, publishing with ${publisherName}`, () => {
    const runSubject = `test.orders.${randomUUID()}`;
    const runId = randomUUID().replaceAll('-', '').slice(0, 12);
    const withPublisher = <T extends object>(options: T): T & { streamPublisher: StreamPublisherFactory } => ({
      ...options,
      streamPublisher,
    });
    let config: NatsConfig;
    let counter = 0;
    /** The bus and the raw connection the wire-format tests look through, on a subject of their own. */
    let bus: NatsEventBus;
    let raw: NatsConnection;
    const subject = `${runSubject}.wire`;

    beforeAll(async () => {
      config = natsConfigFromEnv(process.env);
      bus = new NatsEventBus(config, silent, withPublisher({ subject, stream: `T_${runId}_wire`, deleteStreamOnStop: true }));
      await bus.init();
      raw = await connect({ servers: [...config.servers] });
    });

    afterAll(async () => {
      await bus.stop();
      await raw.close();
    });

    // A fresh subject and stream per test too, deleted at cleanup, so nothing from one test reaches the next.
    orderEventsContract(`nats (${publisherName})`, async () => {
      counter += 1;
      const bus = new NatsEventBus(
        config,
        silent,
        withPublisher({
          subject: `${runSubject}.${counter}`,
          stream: `T_${runId}_${counter}`,
          deleteStreamOnStop: true,
        }),
      );
      await bus.init();
      return { bus, cleanup: () => bus.stop() };
    });

    describe('wire format and robustness', () => {
      it('the stream holds the payload as JSON with the snake_case fields and Nats-Msg-Id = the event id', async () => {
        const envelope = sampleEnvelope({ item: 'wire', quantity: 4 });
        await bus.publishOrderPlaced(envelope);
        await bus.publishOrderPlaced(envelope);
        const jsm = await jetstreamManager(raw);
        const info = await jsm.streams.info(bus.stream);
        expect(info.config.subjects).toEqual([subject]);
        expect(info.state.messages).toBe(1);
        const stored = await jsm.streams.getMessage(bus.stream, { seq: info.state.last_seq });
        expect(stored?.header.get('Nats-Msg-Id')).toBe(envelope.id);
        expect(JSON.parse(stored?.string() ?? '')).toEqual(envelope.event);
      });

      it('a publish no stream stores (the stream was deleted) rejects with ErrUnavailable', async () => {
        const orphan = new NatsEventBus(config, silent, withPublisher({ subject: `${runSubject}.orphan`, stream: `T_${runId}_orphan` }));
        await orphan.init();
        try {
          await orphan.publishOrderPlaced(sampleEnvelope());
          await (await jetstreamManager(raw)).streams.delete(orphan.stream);
          const failure = await orphan.publishOrderPlaced(sampleEnvelope()).then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(failure).toBeInstanceOf(ErrUnavailable);
          expect((failure as Error).message).toMatch(
            streamPublisher === sharedReplyPublisher ? /^publisher: publish: stream unavailable \(503/ : /^publisher: publish: /,
          );
        } finally {
          await orphan.stop();
        }
      });

      it('an undecodable message is dropped and the consumer keeps going', async () => {
        const received: OrderPlacedEnvelope[] = [];
        const controller = new AbortController();
        const done = bus.consumeOrderPlaced((batch) => void received.push(...batch), controller.signal);
        const js = jetstream(raw);
        await js.publish(subject, 'not json', { msgID: randomUUID() });
        await js.publish(subject, JSON.stringify({ order_id: 1 }), { msgID: randomUUID() });
        const good = sampleEnvelope({ item: 'ok' });
        await bus.publishOrderPlaced(good);
        await until(() => received.some((e) => e.id === good.id), 'the good message after the undecodable ones');
        controller.abort();
        await done;
        expect(received.filter((e) => e.event.item !== 'wire')).toEqual([good]);
      });
    });
  });
