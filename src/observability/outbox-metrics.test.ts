import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerOutboxMetrics, type OutboxStatsSource } from './outbox-metrics.ts';

describe('outbox metrics (rule EVT-7-delivery, spec 4.5 own registry)', () => {
  it('expose the relay’s last backlog sample and its totals, at scrape time', async () => {
    let stats: ReturnType<OutboxStatsSource['stats']> = {
      pending: undefined,
      oldestAgeSeconds: undefined,
      published: 0,
      publishFailures: 0,
    };
    const registry = new Registry();
    registerOutboxMetrics(registry, { stats: () => stats });
    const value = async (name: string): Promise<number> => {
      const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(await registry.metrics());
      if (match === null) throw new Error(`${name} missing`);
      return Number(match[1]);
    };
    expect(await value('orders_outbox_pending_events')).toBe(-1);
    expect(await value('orders_outbox_oldest_pending_age_seconds')).toBe(0);
    stats = { pending: 42, oldestAgeSeconds: 12.5, published: 7, publishFailures: 3 };
    expect(await value('orders_outbox_pending_events')).toBe(42);
    expect(await value('orders_outbox_oldest_pending_age_seconds')).toBe(12.5);
    expect(await value('orders_outbox_published_total')).toBe(7);
    expect(await value('orders_outbox_publish_failures_total')).toBe(3);
    stats = { ...stats, published: 10 };
    expect(await value('orders_outbox_published_total')).toBe(10);
  });
});
