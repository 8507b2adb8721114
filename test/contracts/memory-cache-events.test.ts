import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { OrderPlacedEnvelope } from '../../src/ports/order-events.ts';
import { orderCacheContract, sampleOrder } from './order-cache.contract.ts';
import { orderEventsContract, sampleEnvelope } from './order-events.contract.ts';
import { until } from '../support/eventually.ts';

orderCacheContract('memory', async () => ({ cache: new MemoryOrderCache() }));
orderEventsContract('memory', async () => ({ bus: new MemoryEventBus() }));

// The health node names are conformance healthz-clean; the default 5-minute TTL is src/config/rules.test.ts;
// down/up and failNext through the service are conformance healthz-cache-down and cache-miss-reads-store-and-refills (orders.ts).
describe('MemoryOrderCache', () => {
  it('honours a custom TTL and restarts it on overwrite', async () => {
    let now = Date.parse('2024-01-01T00:00:00.000Z');
    const cache = new MemoryOrderCache({ clock: { now: () => new Date(now) }, ttlMs: 1_000 });
    const o = sampleOrder();
    await cache.set(o);
    now += 900;
    await cache.set(o);
    now += 900;
    await expect(cache.get(o.id)).resolves.toEqual(o);
    now += 100;
    await expect(cache.get(o.id)).resolves.toBeUndefined();
  });

  it('stores copies: mutating what was set or got changes nothing inside', async () => {
    const cache = new MemoryOrderCache();
    const o = sampleOrder();
    const stamp = o.createdAt.getTime();
    await cache.set(o);
    o.createdAt.setTime(0);
    const got = await cache.get(o.id);
    expect(got?.createdAt.getTime()).toBe(stamp);
    got?.createdAt.setTime(1);
    expect((await cache.get(o.id))?.createdAt.getTime()).toBe(stamp);
  });
});

describe('MemoryEventBus', () => {
  it('records what was stored, as copies, and counts dropped duplicates', async () => {
    const bus = new MemoryEventBus();
    const e = sampleEnvelope();
    await bus.publishOrderPlaced(e);
    await bus.publishOrderPlaced(e);
    expect(bus.published).toEqual([e.event]);
    expect(bus.published[0]).not.toBe(e.event);
    expect(bus.duplicates).toBe(1);
  });

  it('delivers asynchronously, never inside the publish call', async () => {
    const bus = new MemoryEventBus();
    const controller = new AbortController();
    let delivered = false;
    const done = bus.consumeOrderPlaced(() => {
      delivered = true;
    }, controller.signal);
    const publishing = bus.publishOrderPlaced(sampleEnvelope());
    expect(delivered).toBe(false);
    await publishing;
    await sleep(0);
    expect(delivered).toBe(true);
    controller.abort();
    await done;
  });

  // Redelivery after a throw is the contract's (a throwing handler does not acknowledge); the log line is the fake's.
  it('logs a throwing handler through the injected logger', async () => {
    const lines: string[] = [];
    const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(line) });
    const bus = new MemoryEventBus({ logger, redeliverDelayMs: 5 });
    const controller = new AbortController();
    let calls = 0;
    const done = bus.consumeOrderPlaced(() => {
      calls += 1;
      if (calls === 1) throw new Error('handler exploded');
    }, controller.signal);
    await bus.publishOrderPlaced(sampleEnvelope());
    await until(() => calls >= 2, 'the redelivery');
    controller.abort();
    await done;
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'events: handler failed' });
  });

  it('while down, publish and health reject with ErrUnavailable and nothing is delivered; up again, the backlog flows', async () => {
    const bus = new MemoryEventBus();
    const controller = new AbortController();
    const received: OrderPlacedEnvelope[] = [];
    const stored = sampleEnvelope({ item: 'stored' });
    await bus.publishOrderPlaced(stored);
    bus.trouble.down('broker gone');
    const done = bus.consumeOrderPlaced((batch) => void received.push(...batch), controller.signal);
    await expect(bus.publishOrderPlaced(sampleEnvelope())).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(bus.health()).rejects.toThrow(/publisher: broker gone/);
    await sleep(50);
    expect(received).toEqual([]);
    bus.trouble.up();
    await expect(bus.health()).resolves.toBeUndefined();
    const e = sampleEnvelope();
    await bus.publishOrderPlaced(e);
    await until(() => received.length === 2, 'the backlog and the new event');
    controller.abort();
    await done;
    expect(bus.published).toEqual([stored.event, e.event]);
    expect(received).toEqual([stored, e]);
  });
});
