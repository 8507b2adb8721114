import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpMetrics, UNMATCHED_ROUTE } from './metrics.ts';

function sample(scrape: string, name: string, labels: string): number | undefined {
  const line = scrape.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('HttpMetrics (spec 4.5)', () => {
  it('exposes both metrics with the method/route/status labels', async () => {
    const metrics = new HttpMetrics();
    metrics.observe('GET', 'GET /orders/{id}', 200, 0.002);
    metrics.observe('GET', 'GET /orders/{id}', 200, 0.003);
    metrics.observe('GET', UNMATCHED_ROUTE, 404, 0.001);
    const scrape = await metrics.scrape();
    expect(scrape).toContain('# TYPE orders_http_requests_total counter');
    expect(scrape).toContain('# HELP orders_http_requests_total Total HTTP requests');
    expect(scrape).toContain('# TYPE orders_http_request_duration_seconds histogram');
    expect(scrape).toContain('# HELP orders_http_request_duration_seconds Request duration in seconds');
    expect(sample(scrape, 'orders_http_requests_total', 'method="GET",route="GET /orders/{id}",status="200"')).toBe(2);
    expect(sample(scrape, 'orders_http_requests_total', 'method="GET",route="unmatched",status="404"')).toBe(1);
    expect(sample(scrape, 'orders_http_request_duration_seconds_count', 'method="GET",route="GET /orders/{id}"')).toBe(2);
    expect(metrics.contentType).toMatch(/^text\/plain/);
  });

  it('each instance has its own registry: two instances never share counts', async () => {
    const first = new HttpMetrics();
    const second = new HttpMetrics();
    first.observe('POST', 'POST /orders', 201, 0.01);
    expect(sample(await first.scrape(), 'orders_http_requests_total', 'method="POST",route="POST /orders",status="201"')).toBe(1);
    expect(sample(await second.scrape(), 'orders_http_requests_total', 'method="POST",route="POST /orders",status="201"')).toBeUndefined();
    expect(first.registry).not.toBe(second.registry);
  });

  it("never registers in prom-client's process-global registry", async () => {
    new HttpMetrics().observe('GET', 'GET /orders', 200, 0.01);
    expect(register.getSingleMetric('orders_http_requests_total')).toBeUndefined();
    expect(register.getSingleMetric('orders_http_request_duration_seconds')).toBeUndefined();
    expect(await register.metrics()).not.toContain('orders_http');
  });
});
