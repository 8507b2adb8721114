import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsConfigFromEnv, type NatsConfig } from '../../src/adapters/nats/nats-config.ts';
import { NatsEventBus } from '../../src/adapters/nats/nats-event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { ORDER_PLACED_SUBJECT, type OrderPlaced } from '../../src/domain/order-placed.ts';
import { orderEventsContract } from './order-events.contract.ts';

const NATS_URL = process.env.NATS_URL;
const silent = pino({ enabled: false });

describe('natsConfigFromEnv (spec 8.1)', () => {
  it('reads a URL with a scheme, or a comma-separated list of them', () => {
    expect(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:4222' })).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      display: 'nats://127.0.0.1:4222',
    });
    expect(natsConfigFromEnv({ NATS_URL: 'nats://a:4222, tls://b:4223' }).servers).toEqual(['nats://a:4222', 'tls://b:4223']);
  });

  it('keeps credentials out of the display form', () => {
    const config = natsConfigFromEnv({ NATS_URL: 'nats://user:hunter2@broker:4222' });
    expect(config.display).toBe('nats://broker:4222');
  });

  it('requires NATS_URL', () => {
    expect(() => natsConfigFromEnv({})).toThrow(/NATS_URL/);
  });

  it.each(['127.0.0.1:4222', 'broker', 'http://broker:4222', 'nats://', 'nats://a:4222,b:4222'])('rejects %j', (value) => {
    expect(() => natsConfigFromEnv({ NATS_URL: value })).toThrow(/NATS_URL must be a URL with a scheme/);
  });
});

describe('NatsEventBus start-up (spec 3.4 rule 2)', () => {
  it('init against a closed port fails fast with an error naming NATS_URL', async () => {
    const bus = new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), silent);
    const started = Date.now();
    const failure = await bus.init().then(() => undefined, (err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(failure).toBeInstanceOf(ErrUnavailable);
    expect((failure as Error).message).toMatch(/^publisher: cannot connect to NATS_URL \(nats:\/\/127\.0\.0\.1:1\)/);
    await expect(bus.health()).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(bus.publishOrderPlaced({} as OrderPlaced)).rejects.toBeInstanceOf(ErrUnavailable);
    await bus.stop();
  });

  it('publishes on orders.placed unless told otherwise', () => {
    expect(new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), silent).subject).toBe(ORDER_PLACED_SUBJECT);
  });
});

describe.skipIf(!NATS_URL)('NatsEventBus against NATS_URL', () => {
  const runSubject = `test.orders.${randomUUID()}`;
  let config: NatsConfig;
  let counter = 0;

  beforeAll(() => {
    config = natsConfigFromEnv(process.env);
  });

  // A fresh subject per test too, so a late message from one test cannot reach the next.
  orderEventsContract('nats', async () => {
    counter += 1;
    const bus = new NatsEventBus(config, silent, { subject: `${runSubject}.${counter}` });
    await bus.init();
    return { bus, cleanup: () => bus.stop() };
  });

  describe('wire format and robustness', () => {
    let bus: NatsEventBus;
    let raw: NatsConnection;
    const subject = `${runSubject}.wire`;

    beforeAll(async () => {
      bus = new NatsEventBus(config, silent, { subject });
      await bus.init();
      raw = await connect({ servers: [...config.servers] });
    });

    afterAll(async () => {
      await bus.stop();
      await raw.close();
    });

    it('the payload is JSON with the snake_case event fields', async () => {
      const sub = raw.subscribe(subject, { max: 1 });
      await raw.flush();
      const event: OrderPlaced = { order_id: randomUUID(), user_id: randomUUID(), item: 'wire', quantity: 4, created_at: '2024-01-01T00:00:00.000Z' };
      await bus.publishOrderPlaced(event);
      for await (const msg of sub) expect(JSON.parse(msg.string())).toEqual(event);
      expect(sub.getProcessed()).toBe(1);
    });

    it('an undecodable message is dropped and the consumer keeps going', async () => {
      const received: OrderPlaced[] = [];
      const controller = new AbortController();
      const done = bus.consumeOrderPlaced((e) => void received.push(e), controller.signal);
      await bus.health(); // flushes, so the subscription is registered before the raw publishes
      raw.publish(subject, 'not json');
      raw.publish(subject, JSON.stringify({ order_id: 1 }));
      const good: OrderPlaced = { order_id: randomUUID(), user_id: randomUUID(), item: 'ok', quantity: 1, created_at: '2024-01-01T00:00:00.000Z' };
      raw.publish(subject, JSON.stringify(good));
      await raw.flush();
      for (let i = 0; i < 100 && received.length === 0; i++) await sleep(10);
      controller.abort();
      await done;
      expect(received).toEqual([good]);
    });

    it('health resolves while connected', async () => {
      await expect(bus.health()).resolves.toBeUndefined();
    });
  });
});
