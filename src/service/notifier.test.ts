import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import type { OrderPlaced } from '../domain/order-placed.ts';
import { createLogger } from '../observability/logger.ts';
import { Notifier } from './notifier.ts';

const EVENT: OrderPlaced = {
  order_id: '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b',
  user_id: '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77',
  item: 'widget',
  quantity: 4,
  created_at: '2025-01-02T03:04:05.678Z',
};

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('Notifier (spec 6 rules 2, 4)', () => {
  it('logs `order placed` at info with order_id, user_id and item for each event', async () => {
    const bus = new MemoryEventBus();
    const logs = new LogCapture();
    const notifier = new Notifier(bus, createLogger('debug', logs));
    const controller = new AbortController();
    const running = notifier.run(controller.signal);
    await bus.publishOrderPlaced(EVENT);
    await until(() => logs.find('order placed').length === 1);
    expect(logs.lines).toHaveLength(1);
    expect(logs.lines[0]).toMatchObject({ level: 'info', msg: 'order placed', order_id: EVENT.order_id, user_id: EVENT.user_id, item: 'widget' });
    controller.abort();
    await running;
  });

  it('run resolves (does not reject) when its signal aborts', async () => {
    const bus = new MemoryEventBus();
    const notifier = new Notifier(bus, createLogger('debug', new LogCapture()));
    const controller = new AbortController();
    let settled: 'resolved' | 'rejected' | undefined;
    const running = notifier.run(controller.signal).then(
      () => (settled = 'resolved'),
      () => (settled = 'rejected'),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBeUndefined();
    controller.abort();
    await Promise.race([running, new Promise((_, reject) => setTimeout(() => reject(new Error('run did not return after abort')), 1000))]);
    expect(settled).toBe('resolved');
    expect(bus.consumerCount).toBe(0);
  });

  it('run returns at once for an already aborted signal', async () => {
    const notifier = new Notifier(new MemoryEventBus(), createLogger('debug', new LogCapture()));
    await expect(notifier.run(AbortSignal.abort())).resolves.toBeUndefined();
  });
});
