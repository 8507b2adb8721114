import { Counter, Histogram, Registry } from 'prom-client';

/** Our choice (spec 4.5 leaves it open): sub-millisecond to seconds, for a service whose cache hit is ~1 ms. */
export const HTTP_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Label for requests no route pattern matched (spec 4.5): raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Spec 4.5: an own registry per instance, never prom-client's global one. */
export class HttpMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #duration: Histogram<'method' | 'route'>;

  constructor() {
    this.#requests = new Counter({
      name: 'orders_http_requests_total',
      help: 'Total HTTP requests',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.#duration = new Histogram({
      name: 'orders_http_request_duration_seconds',
      help: 'Request duration in seconds',
      labelNames: ['method', 'route'],
      buckets: HTTP_DURATION_BUCKETS,
      registers: [this.registry],
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
