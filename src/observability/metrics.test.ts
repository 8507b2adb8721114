import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseScrape } from '../../conformance/cases/observability.ts';
import { registerOutboxMetrics, registerServiceMetrics } from './metrics.ts';
import type { OutboxRelayStats } from '../service/outbox-relay.ts';

async function values(registry: Registry): Promise<Record<string, number>> {
  const entries = parseScrape(await registry.metrics()).map(
    (s) =>
      [
        `${s.name}${Object.values(s.labels)
          .map((v) => `/${v}`)
          .join('')}`,
        s.value,
      ] as const,
  );
  return Object.fromEntries(entries);
}

describe('service metrics (spec 4.5)', () => {
  it('[METRICS-service] sessions, pool and connection gauges follow their sources at each scrape; default runtime metrics are there', async () => {
    const registry = new Registry();
    let counts = { live: 2, lingering: 1 };
    let pool = { total: 5, idle: 3, waiting: 0 };
    let redisUp = true;
    registerServiceMetrics(
      registry,
      { counts: () => counts },
      {
        pool: { poolStats: () => pool },
        connections: [
          { name: 'cache', connected: () => redisUp },
          { name: 'publisher', connected: () => true },
        ],
      },
    );
    const first = await values(registry);
    expect(first).toMatchObject({
      'orders_sessions/live': 2,
      'orders_sessions/lingering': 1,
      'orders_db_pool_connections/idle': 3,
      'orders_db_pool_connections/in_use': 2,
      orders_db_pool_waiting_requests: 0,
      'orders_backend_connected/cache': 1,
      'orders_backend_connected/publisher': 1,
    });
    expect(first['process_resident_memory_bytes']).toBeGreaterThan(0);
    expect(first['nodejs_heap_size_used_bytes']).toBeGreaterThan(0);
    counts = { live: 0, lingering: 3 };
    pool = { total: 10, idle: 0, waiting: 4 };
    redisUp = false;
    expect(await values(registry)).toMatchObject({
      'orders_sessions/live': 0,
      'orders_sessions/lingering': 3,
      'orders_db_pool_connections/in_use': 10,
      orders_db_pool_waiting_requests: 4,
      'orders_backend_connected/cache': 0,
    });
  });

  it('without real backends there are no pool or connection families', async () => {
    const registry = new Registry();
    registerServiceMetrics(registry, { counts: () => ({ live: 0, lingering: 0 }) }, undefined);
    const text = await registry.metrics();
    expect(text).toContain('orders_sessions{state="live"} 0');
    expect(text).not.toMatch(/orders_db_pool|orders_backend_connected/);
  });

  it('[METRICS-service] the counter-named default gauges are dropped; the per-type ones stay', async () => {
    const registry = new Registry();
    registerServiceMetrics(registry, { counts: () => ({ live: 0, lingering: 0 }) }, undefined);
    const names = new Set(parseScrape(await registry.metrics()).map((s) => s.name));
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      expect(names.has(name), name).toBe(false);
    }
    expect(registry.getSingleMetric('nodejs_active_handles')).toBeDefined();
  });

  it('default process metrics are collected once per process: every service registry shows the same objects', () => {
    const a = new Registry();
    const b = new Registry();
    registerServiceMetrics(a, { counts: () => ({ live: 0, lingering: 0 }) }, undefined);
    registerServiceMetrics(b, { counts: () => ({ live: 0, lingering: 0 }) }, undefined);
    const metric = a.getSingleMetric('process_cpu_user_seconds_total');
    expect(metric).toBeDefined();
    expect(b.getSingleMetric('process_cpu_user_seconds_total')).toBe(metric);
  });
});

describe('outbox metrics (rule EVT-7-delivery, spec 4.5 own registry)', () => {
  it('expose the relay’s last backlog sample and its totals, at scrape time', async () => {
    let stats: OutboxRelayStats = {
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
