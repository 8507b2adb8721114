import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { orderCacheContract } from './order-cache.contract.ts';
import { orderEventsContract } from './order-events.contract.ts';

orderCacheContract('memory', async () => ({ cache: new MemoryOrderCache() }));
orderEventsContract('memory', async () => ({ bus: new MemoryEventBus() }));

class ManualClock implements Clock {
  #ms = Date.parse('2024-01-01T00:00:00.000Z');
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

function order(): Order {
  return { id: randomUUID(), userId: randomUUID(), item: 'thing', quantity: 1, status: 'pending', createdAt: new Date() };
}

function event(item = 'thing'): OrderPlaced {
  return { order_id: randomUUID(), user_id: randomUUID(), item, quantity: 1, created_at: new Date().toISOString() };
}

describe('MemoryOrderCache', () => {
  it('is the health node named cache', () => {
    expect(new MemoryOrderCache().name).toBe('cache');
  });

  it('expires an entry once the TTL has passed on the injected clock (default 5 minutes)', async () => {
    const clock = new ManualClock();
    const cache = new MemoryOrderCache({ clock });
    const o = order();
    await cache.set(o);
    clock.advance(5 * 60_000 - 1);
    await expect(cache.get(o.id)).resolves.toEqual(o);
    expect(cache.size).toBe(1);
    clock.advance(1);
    await expect(cache.get(o.id)).resolves.toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('honours a custom TTL and restarts it on overwrite', async () => {
    const clock = new ManualClock();
    const cache = new MemoryOrderCache({ clock, ttlMs: 1_000 });
    const o = order();
    await cache.set(o);
    clock.advance(900);
    await cache.set(o);
    clock.advance(900);
    await expect(cache.get(o.id)).resolves.toEqual(o);
    clock.advance(100);
    await expect(cache.get(o.id)).resolves.toBeUndefined();
  });

  it('stores copies: mutating what was set or got changes nothing inside', async () => {
    const cache = new MemoryOrderCache();
    const o = order();
    const stamp = o.createdAt.getTime();
    await cache.set(o);
    o.createdAt.setTime(0);
    const got = await cache.get(o.id);
    expect(got?.createdAt.getTime()).toBe(stamp);
    got?.createdAt.setTime(1);
    expect((await cache.get(o.id))?.createdAt.getTime()).toBe(stamp);
  });

  it('while down, get, set and health reject with ErrUnavailable; up restores them', async () => {
    const cache = new MemoryOrderCache();
    const o = order();
    await cache.set(o);
    cache.trouble.down();
    await expect(cache.get(o.id)).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.set(o)).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.health()).rejects.toThrow(/cache/);
    cache.trouble.up();
    await expect(cache.health()).resolves.toBeUndefined();
    await expect(cache.get(o.id)).resolves.toEqual(o);
  });

  it('failNext fails exactly the next operations, then works', async () => {
    const cache = new MemoryOrderCache();
    const o = order();
    cache.trouble.failNext(1);
    await expect(cache.set(o)).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(cache.health()).resolves.toBeUndefined();
    await cache.set(o);
    await expect(cache.get(o.id)).resolves.toEqual(o);
  });
});

describe('MemoryEventBus', () => {
  it('is the health node named publisher', () => {
    expect(new MemoryEventBus().name).toBe('publisher');
  });

  it('records what was published, as copies', async () => {
    const bus = new MemoryEventBus();
    const e = event();
    await bus.publishOrderPlaced(e);
    expect(bus.published).toEqual([e]);
    expect(bus.published[0]).not.toBe(e);
  });

  it('delivers asynchronously, never inside the publish call', async () => {
    const bus = new MemoryEventBus();
    const controller = new AbortController();
    let delivered = false;
    const done = bus.consumeOrderPlaced(() => {
      delivered = true;
    }, controller.signal);
    const publishing = bus.publishOrderPlaced(event());
    expect(delivered).toBe(false);
    await publishing;
    await sleep(0);
    expect(delivered).toBe(true);
    controller.abort();
    await done;
  });

  it('drains: events published before the abort are delivered before consume resolves', async () => {
    const bus = new MemoryEventBus();
    const controller = new AbortController();
    const received: string[] = [];
    const done = bus.consumeOrderPlaced(async (e) => {
      await sleep(5);
      received.push(e.item);
    }, controller.signal);
    for (const item of ['a', 'b', 'c']) await bus.publishOrderPlaced(event(item));
    controller.abort();
    await bus.publishOrderPlaced(event('after-abort'));
    await done;
    expect(received).toEqual(['a', 'b', 'c']);
    expect(bus.consumerCount).toBe(0);
  });

  it('logs a throwing handler through the injected logger and keeps delivering', async () => {
    const lines: string[] = [];
    const logger = pino({ base: undefined }, { write: (line: string) => void lines.push(line) });
    const bus = new MemoryEventBus({ logger });
    const controller = new AbortController();
    const seen: string[] = [];
    const done = bus.consumeOrderPlaced((e) => {
      if (e.item === 'bad') throw new Error('handler exploded');
      seen.push(e.item);
    }, controller.signal);
    await bus.publishOrderPlaced(event('bad'));
    await bus.publishOrderPlaced(event('good'));
    await sleep(10);
    controller.abort();
    await done;
    expect(seen).toEqual(['good']);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'events: handler failed' });
  });

  it('while down, publish and health reject with ErrUnavailable and nothing is recorded or delivered', async () => {
    const bus = new MemoryEventBus();
    const controller = new AbortController();
    const received: OrderPlaced[] = [];
    const done = bus.consumeOrderPlaced((e) => void received.push(e), controller.signal);
    bus.trouble.down('broker gone');
    await expect(bus.publishOrderPlaced(event())).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(bus.health()).rejects.toThrow(/publisher: broker gone/);
    bus.trouble.up();
    await expect(bus.health()).resolves.toBeUndefined();
    const e = event();
    await bus.publishOrderPlaced(e);
    await sleep(10);
    controller.abort();
    await done;
    expect(bus.published).toEqual([e]);
    expect(received).toEqual([e]);
  });
});
