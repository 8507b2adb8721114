// The embedded backends (backends.ts): the fake cache expires on the service clock, the fake broker
// logs and redelivers a failed handler, and the demo users are seeded only when asked for.
import { describe, expect, it } from 'vitest';
import { sampleOrder } from '../test/contracts/order-cache.contract.ts';
import { until } from '../test/support/eventually.ts';
import { LogCapture } from '../test/support/log-capture.ts';
import { createLogger } from '../src/observability/logger.ts';
import { createEmbeddedBackends } from './backends.ts';

describe('createEmbeddedBackends (spec 3.5)', () => {
  it('[SIM-clock-advance] the fake cache expires on the service clock: moved past the TTL, a cached order is gone', async () => {
    let now = new Date('2030-01-01T00:00:00Z').getTime();
    const backends = await createEmbeddedBackends(createLogger('debug', new LogCapture()), {
      seedDemoUsers: false,
      clock: { now: () => new Date(now) },
    });
    const order = sampleOrder();
    await backends.cache.set(order);
    now += backends.cacheFake.ttlMs - 1;
    expect((await backends.cache.get(order.id))?.id).toBe(order.id);
    now += 1;
    expect(await backends.cache.get(order.id)).toBeUndefined();
  });

  it("[EVT-7-delivery] a consumer's failed handler is logged by the fake broker (`events: handler failed`), then delivered again", async () => {
    const logs = new LogCapture();
    const backends = await createEmbeddedBackends(createLogger('debug', logs), { seedDemoUsers: false });
    const order = sampleOrder();
    const controller = new AbortController();
    let attempts = 0;
    const consuming = backends.subscriber.consumeOrderPlaced(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('ledger down');
    }, controller.signal);
    try {
      await backends.publisher.publishOrderPlaced({
        id: 'event-1',
        event: {
          order_id: order.id,
          user_id: order.userId,
          item: order.item,
          quantity: order.quantity,
          created_at: order.createdAt.toISOString(),
        },
      });
      await until(() => attempts >= 2, 'the redelivery');
    } finally {
      controller.abort();
      await consuming;
    }
    expect(logs.find('events: handler failed')).toEqual([
      expect.objectContaining({ level: 'error', err: 'ledger down', order_id: order.id, event_id: 'event-1' }),
    ]);
  });

  it('[AUTH-10-credentials] without seeding there are no demo logins to announce', async () => {
    const backends = await createEmbeddedBackends(createLogger('debug', new LogCapture()), { seedDemoUsers: false });
    expect(backends.demoUsers).toEqual([]);
  });
});
