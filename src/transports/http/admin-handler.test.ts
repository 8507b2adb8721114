import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Checker, HealthReport } from '../../lifecycle/checker.ts';
import { HttpMetrics } from '../../observability/metrics.ts';
import { createAdminHandler } from './admin-handler.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function serve(checker: Checker, metrics = new HttpMetrics()): Promise<string> {
  server = createServer(createAdminHandler(checker, metrics));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function fixed(health: HealthReport, ready: HealthReport): Checker {
  return { health: async () => health, ready: async () => ready };
}

describe('admin handler (spec 4.2)', () => {
  it('200 with the report when clean; readiness with no component is clean with nodes null', async () => {
    const url = await serve(fixed({ clean: true, nodes: [{ name: 'database', status: 'ok' }] }, { clean: true, nodes: null }));
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toBe('application/json');
    expect(await health.json()).toStrictEqual({ clean: true, nodes: [{ name: 'database', status: 'ok' }] });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe('{"clean":true,"nodes":null}');
  });

  it('503 with the JSON report when not clean', async () => {
    const failing: HealthReport = { clean: false, nodes: [{ name: 'cache', status: 'unavailable', error: 'cache: connection refused' }] };
    const url = await serve(fixed(failing, failing));
    for (const path of ['/healthz', '/readyz']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.json()).toStrictEqual(failing);
    }
  });

  it('/metrics is the scrape of the given registry, query strings ignored', async () => {
    const metrics = new HttpMetrics();
    metrics.observe('GET', 'GET /orders', 200, 0.01);
    const url = await serve(fixed({ clean: true, nodes: null }, { clean: true, nodes: null }), metrics);
    const response = await fetch(`${url}/metrics?x=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.contentType);
    expect(await response.text()).toBe(await metrics.scrape());
  });

  it('unknown paths and other methods are 404', async () => {
    const url = await serve(fixed({ clean: true, nodes: null }, { clean: true, nodes: null }));
    for (const [method, path] of [['GET', '/'], ['GET', '/orders'], ['POST', '/healthz'], ['GET', '/healthz/']]) {
      const response = await fetch(`${url}${path}`, { method });
      expect([method, path, response.status]).toStrictEqual([method, path, 404]);
    }
  });

  it('/livez answers 200 without asking the checker, even when every component is down (ADMIN-livez)', async () => {
    const failing: HealthReport = { clean: false, nodes: [{ name: 'database', status: 'unavailable', error: 'database: connection refused' }] };
    let asked = 0;
    const counting: Checker = {
      health: async () => (asked++, failing),
      ready: async () => (asked++, failing),
    };
    const url = await serve(counting);
    const response = await fetch(`${url}/livez`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('{"clean":true,"nodes":null}');
    expect(asked).toBe(0);
    expect((await fetch(`${url}/livez`, { method: 'POST' })).status).toBe(404);
  });

  it('a checker that throws gives 500, not a hung request', async () => {
    const broken: Checker = {
      health: async () => {
        throw new Error('checker bug');
      },
      ready: async () => ({ clean: true, nodes: null }),
    };
    const url = await serve(broken);
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(500);
    expect(await response.json()).toStrictEqual({ error: 'internal server error' });
  });
});
