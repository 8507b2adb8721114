import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsEventBus } from '../../src/adapters/nats/event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { sampleEnvelope } from '../contracts/order-events.contract.ts';
import { findBinary, startNatsServer, type LocalServer } from './local-servers.ts';
import { until } from '../support/eventually.ts';

const healthy = (bus: NatsEventBus) =>
  bus.health().then(
    () => true,
    () => false,
  );

describe.skipIf(findBinary('nats-server') === undefined)('NatsEventBus through a NATS outage (own nats-server)', () => {
  let server: LocalServer;
  let bus: NatsEventBus;
  const lines: Array<{ msg: string }> = [];
  const received: string[] = [];
  const controller = new AbortController();
  let consuming: Promise<void>;
  let consumerSettled = false;

  beforeAll(async () => {
    server = await startNatsServer();
    const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    bus = new NatsEventBus({ servers: [`nats://127.0.0.1:${server.port}`], display: `nats://127.0.0.1:${server.port}` }, logger, {
      subject: `fault.orders.${randomUUID()}`,
    });
    await bus.init();
    consuming = bus.consumeOrderPlaced((batch) => void received.push(...batch.map((e) => e.event.item)), controller.signal);
    consuming.then(
      () => (consumerSettled = true),
      () => (consumerSettled = true),
    );
  });

  afterAll(async () => {
    controller.abort();
    await consuming?.catch(() => undefined);
    await bus?.stop();
    await server?.stop();
  });

  it('delivers before the outage', async () => {
    await bus.publishOrderPlaced(sampleEnvelope({ item: 'before' }));
    await until(() => received.includes('before'), 'the first event');
    await expect(bus.health()).resolves.toBeUndefined();
  });

  for (const cycle of [1, 2]) {
    it(`outage ${cycle}: publish and health reject with ErrUnavailable, the consumer survives, and a restart heals`, async () => {
      await server.kill();
      const noticedMs = await until(async () => !(await healthy(bus)), 'health to reject');
      console.log(`nats outage ${cycle}: kill -> health rejects in ${noticedMs.toFixed(0)} ms`);

      // A second consumer aborted mid-outage still returns promptly (no drain that waits for the broker).
      const side = new AbortController();
      const sideDone = bus.consumeOrderPlaced(() => undefined, side.signal);

      for (let i = 0; i < 5; i++) {
        const error = await bus.publishOrderPlaced(sampleEnvelope({ item: `lost-${cycle}-${i}` })).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(ErrUnavailable);
        const health = await bus.health().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(health).toBeInstanceOf(ErrUnavailable);
        expect((health as Error).message).toBe('publisher: disconnected from the broker; reconnecting');
        await sleep(250);
      }
      side.abort();
      await sideDone;
      expect(consumerSettled).toBe(false);

      const restarted = performance.now();
      await server.start();
      const portOpenMs = performance.now() - restarted;
      const healthyMs = portOpenMs + (await until(() => healthy(bus), 'health to recover'));
      console.log(
        `nats outage ${cycle}: restart -> healthy in ${healthyMs.toFixed(0)} ms (port accepting after ${portOpenMs.toFixed(0)} ms)`,
      );

      // The long-running consumer was resubscribed by the client and gets new events; nothing published
      // during the outage shows up (it was rejected, not buffered).
      await bus.publishOrderPlaced(sampleEnvelope({ item: `after-${cycle}` }));
      await until(() => received.includes(`after-${cycle}`), 'an event after the restart');
      expect(received.filter((item) => item.startsWith('lost-'))).toEqual([]);
      expect(consumerSettled).toBe(false);
    });
  }

  it('logged one warning per outage and one recovery line', () => {
    expect(lines.filter((l) => l.msg.startsWith('publisher: connection lost'))).toHaveLength(2);
    expect(lines.filter((l) => l.msg === 'publisher: connection restored')).toHaveLength(2);
    expect(lines).toHaveLength(4);
  });

  it('the consumer resolves on abort after the outages', async () => {
    controller.abort();
    await expect(consuming).resolves.toBeUndefined();
  });
});
