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
});
