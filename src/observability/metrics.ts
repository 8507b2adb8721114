/**
 * The service's metrics in its own registry (spec 4.5: never prom-client's global one): the HTTP families the
 * transports feed, and what operators watch besides requests (rules METRICS-service, EVT-7-delivery), all
 * read at scrape time from state the process already keeps, so no scrape waits on a backend. Label values
 * come from fixed sets (bounded cardinality).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { OutboxRelayStats } from '../service/outbox-relay.ts';

/** Our choice (spec 4.5 leaves it open): sub-millisecond to seconds, for a service whose cache hit is ~1 ms. */
export const HTTP_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Label for requests no route pattern matched (spec 4.5): raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

export class HttpMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #duration: Histogram<'method' | 'route'>;

  constructor() {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'orders_http_requests_total',
      help: 'Total HTTP requests',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'orders_http_request_duration_seconds',
      help: 'Request duration in seconds',
      labelNames: ['method', 'route'],
      buckets: HTTP_DURATION_BUCKETS,
      registers,
    });
  }

  /** `route` must be a pattern such as `GET /orders/{id}` or UNMATCHED_ROUTE. */
  observe(method: string, route: string, status: number, seconds: number): void {
    this.#requests.inc({ method, route, status: String(status) });
    this.#duration.observe({ method, route }, seconds);
  }

  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Real backends' connection state: the PostgreSQL pool, and Redis (cache) and NATS (publisher) by component name. */
export interface BackendMetricSources {
  readonly pool?: { poolStats(): { readonly total: number; readonly idle: number; readonly waiting: number } };
  readonly connections: ReadonlyArray<{ readonly name: string; connected(): boolean }>;
}

let processRegistry: Registry | undefined;

/**
 * prom-client's default process and Node runtime metrics. Collecting them starts an event-loop delay monitor
 * and a GC observer that are never stopped: so once per process, in a registry of their own, and every
 * service registry shows the same metric objects.
 */
function processMetrics(): readonly Metric[] {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    // Gauges named like counters, which `promtool check metrics` rejects; the per-type gauges
    // (nodejs_active_handles{type} and the rest) say the same.
    for (const kind of ['handles', 'requests', 'resources']) processRegistry.removeSingleMetric(`nodejs_active_${kind}_total`);
  }
  // The metric objects themselves (typed as their JSON shape in prom-client's .d.ts).
  return processRegistry.getMetricsAsArray() as unknown as Metric[];
}

/** Rule METRICS-service: process and runtime metrics, session counts by state, and the backends' connections. */
export function registerServiceMetrics(
  registry: Registry,
  sessions: { counts(): { live: number; lingering: number } },
  backends: BackendMetricSources | undefined,
): void {
  for (const metric of processMetrics()) registry.registerMetric(metric);
  const states = 'Session instances by state: live (held by a request) or lingering (kept after the last holder)';
  gauge(registry, 'orders_sessions', states, () => sessions.counts(), 'state');
  const pool = backends?.pool;
  if (pool !== undefined) {
    const byState = (): Record<string, number> => {
      const { total, idle } = pool.poolStats();
      return { idle, in_use: total - idle };
    };
    gauge(registry, 'orders_db_pool_connections', 'PostgreSQL pool connections by state: idle or in_use', byState, 'state');
    gauge(registry, 'orders_db_pool_waiting_requests', 'Queries waiting for a PostgreSQL pool connection', () => pool.poolStats().waiting);
  }
  const connections = backends?.connections ?? [];
  if (connections.length > 0) {
    const help = 'Whether the connection of a backend component is up (1) or not (0): cache (Redis), publisher (NATS)';
    const up = (): Record<string, number> => Object.fromEntries(connections.map((c) => [c.name, c.connected() ? 1 : 0]));
    gauge(registry, 'orders_backend_connected', help, up, 'component');
  }
}

/** The outbox backlog (rule EVT-7-delivery) from the relay's last sample (every second); -1 until the first. */
export function registerOutboxMetrics(registry: Registry, relay: { stats(): OutboxRelayStats }): void {
  const pending = 'Order-placed events written but not yet acknowledged by the broker (last sample; -1 before the first)';
  gauge(registry, 'orders_outbox_pending_events', pending, () => relay.stats().pending ?? -1);
  const age = 'Age of the oldest unsent order-placed event (0 when none is pending)';
  gauge(registry, 'orders_outbox_oldest_pending_age_seconds', age, () => relay.stats().oldestAgeSeconds ?? 0);
  total(registry, 'orders_outbox_published_total', 'Order-placed events the broker acknowledged', () => relay.stats().published);
  const failures = 'Publish attempts of order-placed events that failed (each is retried)';
  total(registry, 'orders_outbox_publish_failures_total', failures, () => relay.stats().publishFailures);
}

/** A counter following a total kept elsewhere. */
function total(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** A gauge read at scrape time: one value, or one per value of its one label. */
function gauge(registry: Registry, name: string, help: string, read: () => number | Record<string, number>, label?: string): void {
  new Gauge({
    name,
    help,
    labelNames: label === undefined ? [] : [label],
    registers: [registry],
    collect() {
      const value = read();
      if (typeof value === 'number') this.set(value);
      else for (const [key, each] of Object.entries(value)) this.set({ [label!]: key }, each);
    },
  });
}
