import { Counter, Gauge, type Registry } from 'prom-client';

/** The relay's view of itself (service/outbox-relay.ts OutboxRelayStats), read at scrape time. */
export interface OutboxStatsSource {
  stats(): {
    readonly pending: number | undefined;
    readonly oldestAgeSeconds: number | undefined;
    readonly published: number;
    readonly publishFailures: number;
  };
}

/**
 * The outbox backlog in the service's own registry (spec 4.5, rule EVT-7-delivery). Values come from the relay's
 * last sample (every second), so a scrape never waits on the database; -1 until the first sample.
 */
export function registerOutboxMetrics(registry: Registry, source: OutboxStatsSource): void {
  new Gauge({
    name: 'orders_outbox_pending_events',
    help: 'Order-placed events written but not yet acknowledged by the broker (last sample; -1 before the first)',
    registers: [registry],
    collect() {
      this.set(source.stats().pending ?? -1);
    },
  });
  new Gauge({
    name: 'orders_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest unsent order-placed event (0 when none is pending)',
    registers: [registry],
    collect() {
      this.set(source.stats().oldestAgeSeconds ?? 0);
    },
  });
  monotonic(registry, 'orders_outbox_published_total', 'Order-placed events the broker acknowledged', () => source.stats().published);
  monotonic(
    registry,
    'orders_outbox_publish_failures_total',
    'Publish attempts of order-placed events that failed (each is retried)',
    () => source.stats().publishFailures,
  );
}

/** A counter that follows a total kept elsewhere: each scrape adds what the total grew by. */
function monotonic(registry: Registry, name: string, help: string, read: () => number): void {
  let last = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      this.inc(Math.max(0, now - last));
      last = now;
    },
  });
}
