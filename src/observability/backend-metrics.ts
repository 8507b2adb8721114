import { collectDefaultMetrics, Gauge, Registry, type Metric } from 'prom-client';

const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

let processRegistry: Registry | undefined;

/**
 * prom-client's default metrics describe the process, and collecting them starts an event-loop delay
 * monitor and a GC observer that are never stopped: so they are collected once per process, in a
 * registry of their own (never prom-client's global one), and each service registry shows the same
 * metric objects.
 */
function processMetrics(): readonly Metric[] {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    // Gauges named like counters, which `promtool check metrics` rejects; the per-type gauges
    // (nodejs_active_handles{type} and the rest) say the same.
    for (const name of MISNAMED_DEFAULT_GAUGES) processRegistry.removeSingleMetric(name);
  }
  // The array holds the metric objects themselves (typed as their JSON shape in prom-client's .d.ts).
  return processRegistry.getMetricsAsArray() as unknown as Metric[];
}

/** A connection-owning component that can say, without I/O, whether it is connected. */
export interface ConnectionSource {
  readonly name: string;
  connected(): boolean;
}

export interface PoolStatsSource {
  poolStats(): { readonly total: number; readonly idle: number; readonly waiting: number };
}

export interface BackendMetricSources {
  /** The PostgreSQL pool. */
  readonly pool?: PoolStatsSource;
  /** Redis (cache) and NATS (publisher), by component name. */
  readonly connections: readonly ConnectionSource[];
}

/**
 * Rule METRICS-service: what operators watch besides requests, in the service's own registry (spec 4.5),
 * all read at scrape time from state the process already keeps (no scrape waits on a backend):
 * prom-client's default process and Node runtime metrics, session counts by state, the PostgreSQL pool
 * and the connection state of Redis and NATS. Label values come from fixed sets (bounded cardinality).
 */
export function registerServiceMetrics(
  registry: Registry,
  sessions: { counts(): { live: number; lingering: number } },
  backends: BackendMetricSources | undefined,
): void {
  for (const metric of processMetrics()) registry.registerMetric(metric);
  new Gauge({
    name: 'orders_sessions',
    help: 'Session instances by state: live (held by a request) or lingering (kept after the last holder)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const counts = sessions.counts();
      this.set({ state: 'live' }, counts.live);
      this.set({ state: 'lingering' }, counts.lingering);
    },
  });
  const pool = backends?.pool;
  if (pool !== undefined) {
    new Gauge({
      name: 'orders_db_pool_connections',
      help: 'PostgreSQL pool connections by state: idle or in_use',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const stats = pool.poolStats();
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'in_use' }, stats.total - stats.idle);
      },
    });
    new Gauge({
      name: 'orders_db_pool_waiting_requests',
      help: 'Queries waiting for a PostgreSQL pool connection',
      registers: [registry],
      collect() {
        this.set(pool.poolStats().waiting);
      },
    });
  }
  const connections = backends?.connections ?? [];
  if (connections.length > 0) {
    new Gauge({
      name: 'orders_backend_connected',
      help: 'Whether the connection of a backend component is up (1) or not (0): cache (Redis), publisher (NATS)',
      labelNames: ['component'],
      registers: [registry],
      collect() {
        for (const source of connections) this.set({ component: source.name }, source.connected() ? 1 : 0);
      },
    });
  }
}
