// The fakes' delivery and timing shapes (fakes/README.md): the unseeded defaults the fast suite relies on,
// and what a seed adds. The JetStream contract itself (test/contracts/order-events.contract.ts) holds the default bus.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ErrConflict, ErrUnavailable } from '../src/domain/errors.ts';
import type { OrderPlacedEnvelope } from '../src/ports/order-events.ts';
import { sampleOrder } from '../test/contracts/order-cache.contract.ts';
import { sampleEnvelope } from '../test/contracts/order-events.contract.ts';
import { FakeTimers } from '../test/support/fake-timers.ts';
import { MemoryOrderCache } from './memory-cache.ts';
import { MemoryEventBus } from './memory-event-bus.ts';
import { MemoryStore } from './memory-store.ts';

/** Lets every queued continuation run (the bus never waits on a timer to deliver what is ready). */
const turns = async (n = 50): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

/** Consumes from `bus` on fake time, recording each batch's ids; `fail` decides a batch's fate. */
function record(bus: MemoryEventBus, fail: (batch: readonly OrderPlacedEnvelope[], call: number) => boolean = () => false) {
  const batches: string[][] = [];
  const controller = new AbortController();
  const done = bus.consumeOrderPlaced((batch) => {
    batches.push(batch.map((e) => e.id));
    if (fail(batch, batches.length)) throw new Error('ledger down');
  }, controller.signal);
  return {
    batches,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

async function publishAll(bus: MemoryEventBus, n: number): Promise<OrderPlacedEnvelope[]> {
  const envelopes = Array.from({ length: n }, (_, i) => sampleEnvelope({ item: `item-${i}` }));
  for (const e of envelopes) await bus.publishOrderPlaced(e);
  return envelopes;
}

describe('MemoryEventBus delivery shapes', () => {
  it('[FAKE-shapes] unseeded: what is ready goes in one batch, at most maxBatch; redeliveries come before new events', async () => {
    const timers = new FakeTimers();
    const bus = new MemoryEventBus({ timers, maxBatch: 4, redeliverDelayMs: 10 });
    const envelopes = await publishAll(bus, 6);
    const consumer = record(bus, (_batch, call) => call === 1);
    await turns();
    // The first batch failed (nak): it is out of the queue until the delay, so the rest goes first.
    expect(consumer.batches).toEqual([envelopes.slice(0, 4).map((e) => e.id), envelopes.slice(4).map((e) => e.id)]);
    expect(bus.unacknowledged).toBe(4);
    const late = await publishAll(bus, 1);
    await turns();
    timers.advance(10);
    await bus.publishOrderPlaced(sampleEnvelope({ item: 'after' }));
    await turns();
    expect(consumer.batches.slice(2)).toEqual([late.map((e) => e.id), envelopes.slice(0, 4).map((e) => e.id), [expect.any(String)]]);
    expect(bus.unacknowledged).toBe(0);
    await consumer.stop();
  });

  it('[FAKE-shapes] an event whose handler outlives ack_wait is delivered again, to another consumer', async () => {
    const timers = new FakeTimers();
    const bus = new MemoryEventBus({ timers, ackWaitMs: 100 });
    const [envelope] = await publishAll(bus, 1);
    let release: () => void = () => undefined;
    const controller = new AbortController();
    const slow = bus.consumeOrderPlaced(() => new Promise<void>((resolve) => (release = resolve)), controller.signal);
    await turns();
    const second = record(bus);
    timers.advance(100);
    await turns();
    expect(second.batches).toEqual([[envelope!.id]]);
    release();
    await turns();
    expect(bus.unacknowledged).toBe(0);
    await second.stop();
    controller.abort();
    await slow;
  });

  it('[FAKE-shapes] seeded: several batch sizes, a batch holding an event twice, lost acks redelivered after ack_wait; all acknowledged in the end', async () => {
    const timers = new FakeTimers();
    const bus = new MemoryEventBus({ timers, seed: 3, ackWaitMs: 1_000 });
    const consumer = record(bus);
    const envelopes = await publishAll(bus, 400);
    await turns(2_000);
    timers.advance(10); // the acks' spread
    expect(bus.unacknowledged).toBeGreaterThan(0); // the lost ones
    for (let i = 0; i < 10 && bus.unacknowledged > 0; i++) {
      timers.advance(1_000);
      await turns(2_000);
      timers.advance(10);
    }
    expect(bus.unacknowledged).toBe(0);
    const sizes = new Set(consumer.batches.map((b) => b.length));
    expect(sizes.size).toBeGreaterThan(2);
    expect(consumer.batches.some((b) => new Set(b).size < b.length)).toBe(true);
    const deliveries = consumer.batches.flat();
    expect(new Set(deliveries)).toEqual(new Set(envelopes.map((e) => e.id)));
    expect(deliveries.length).toBeGreaterThan(envelopes.length);
    await consumer.stop();
  });

  it('[FAKE-shapes] seeded: the same seed gives the same batches, another seed others', async () => {
    const run = async (seed: number): Promise<number[]> => {
      const bus = new MemoryEventBus({ timers: new FakeTimers(), seed });
      for (let i = 0; i < 60; i++) await bus.publishOrderPlaced({ ...sampleEnvelope(), id: `e-${i}` });
      const consumer = record(bus);
      await turns(500);
      await consumer.stop();
      return consumer.batches.map((b) => b.length);
    };
    expect(await run(11)).toEqual(await run(11));
    expect(await run(11)).not.toEqual(await run(12));
  });

  it('[FAKE-shapes] an acknowledgement sent while the broker is down is lost: the event comes back after ack_wait', async () => {
    const timers = new FakeTimers();
    const bus = new MemoryEventBus({ timers, ackWaitMs: 100 });
    const [envelope] = await publishAll(bus, 1);
    const batches: string[][] = [];
    const controller = new AbortController();
    const done = bus.consumeOrderPlaced((batch) => {
      batches.push(batch.map((e) => e.id));
      if (batches.length === 1) bus.trouble.down();
    }, controller.signal);
    await turns();
    bus.trouble.up();
    timers.advance(100);
    await turns();
    expect(batches).toEqual([[envelope!.id], [envelope!.id]]);
    controller.abort();
    await done;
  });

  it('[FAKE-shapes] drain takes what is ready, in batches, and leaves what is delivered and unacknowledged', async () => {
    const bus = new MemoryEventBus({ maxBatch: 2 });
    const envelopes = await publishAll(bus, 5);
    const batches: number[] = [];
    await bus.drainOrderPlaced((batch) => void batches.push(batch.length), 1_000);
    expect(batches).toEqual([2, 2, 1]);
    expect(bus.unacknowledged).toBe(0);
    expect(envelopes).toHaveLength(5);
  });
});

describe('MemoryStore shapes', () => {
  const placement = (userId: string, key?: string) => {
    const order = { ...sampleOrder(), userId };
    const now = new Date();
    return {
      order,
      event: sampleEnvelope({ order_id: order.id }),
      idempotency: key === undefined ? undefined : { key, fingerprint: 'f', now, expiresAt: new Date(now.getTime() + 60_000) },
    };
  };

  it('[FAKE-shapes] unseeded, calls made at once take effect in call order; seeded, in a drawn order that a seed repeats', async () => {
    const winner = async (seed: number | undefined): Promise<number> => {
      const store = new MemoryStore({ seed });
      const user = randomUUID();
      const tries = Array.from({ length: 4 }, () => placement(user, 'k'));
      const results = await Promise.all(tries.map((p) => store.place(p)));
      return results.findIndex((r) => r.outcome === 'created');
    };
    expect(await winner(undefined)).toBe(0);
    const winners = await Promise.all(Array.from({ length: 20 }, (_, seed) => winner(seed)));
    expect(new Set(winners).size).toBeGreaterThan(1);
    expect(await Promise.all(Array.from({ length: 20 }, (_, seed) => winner(seed)))).toEqual(winners);
  });

  it('[FAKE-shapes] a unique violation reads as the adapter translates SQLSTATE 23505, naming the constraint', async () => {
    const store = new MemoryStore();
    const p = placement(randomUUID());
    await store.place(p);
    await expect(store.insert(p.order)).rejects.toThrow(new ErrConflict('database: insert order: duplicate key (constraint orders_pkey)'));
    const user = { id: randomUUID(), username: 'u', passwordHash: 'h' };
    await store.add(user);
    await expect(store.add({ ...user, id: randomUUID() })).rejects.toThrow(/duplicate key \(constraint users_username_key\)/);
    await expect(store.add({ ...user, username: 'v' })).rejects.toThrow(/duplicate key \(constraint users_pkey\)/);
    await expect(store.add({ ...user, username: 'a\u0000b' })).rejects.toBeInstanceOf(ErrUnavailable);
  });
});

describe('MemoryOrderCache shapes', () => {
  it('[FAKE-shapes] seeded, some gets miss an entry that was set (maxmemory eviction); unseeded, none do', async () => {
    const misses = async (seed: number | undefined): Promise<number> => {
      const cache = new MemoryOrderCache({ seed });
      let missed = 0;
      for (let i = 0; i < 100; i++) {
        const order = sampleOrder();
        await cache.set(order);
        if ((await cache.get(order.id)) === undefined) missed += 1;
      }
      return missed;
    };
    expect(await misses(undefined)).toBe(0);
    expect(await misses(5)).toBeGreaterThan(0);
  });
});
