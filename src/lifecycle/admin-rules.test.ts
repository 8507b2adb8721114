// The admin routes over any Checker (rules ADMIN-*, HEALTH-nodes-null): reports as is, /metrics, 404s, a throwing checker.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listenLocal } from '../../test/support/ports.ts';
import { HttpMetrics } from '../observability/metrics.ts';
import { createAdminHandler } from '../transports/http/admin/admin-handler.ts';
import { ComponentChecker, type Checker } from './checker.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };

async function get(
  checker: Checker,
  path: string,
  method = 'GET',
  metrics = new HttpMetrics(),
): Promise<{ status: number; type: string; text: string }> {
  const server = createServer(createAdminHandler(checker, metrics));
  const port = await listenLocal(server);
  try {
    const reply = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    return { status: reply.status, type: reply.headers.get('content-type') ?? '', text: await reply.text() };
  } finally {
    server.close();
  }
}

describe('admin routes over any checker (spec 2.3, 4.2)', () => {
  it('[ADMIN-checker, ADMIN-readyz-null, HEALTH-nodes-null, ADMIN-healthz, ADMIN-readyz] serve the checker report as is', async () => {
    const none = new ComponentChecker([{ name: 'plain' }]);
    for (const path of ['/readyz', '/healthz'])
      expect(await get(none, path)).toMatchObject({ status: 200, text: '{"clean":true,"nodes":null}' });
    const stub: Checker = {
      health: async () => ({ clean: false, nodes: [{ name: 'stub', status: 'unavailable', error: 'stub down' }] }),
      ready: async () => ({ clean: false, nodes: [{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }] }),
    };
    for (const [path, report] of [
      ['/healthz', await stub.health()],
      ['/readyz', await stub.ready()],
    ] as const) {
      const reply = await get(stub, path);
      expect(reply.status).toBe(503);
      expect(reply.type).toMatch(/^application\/json/);
      expect(JSON.parse(reply.text)).toEqual(report);
    }
  });

  it('/metrics is the scrape of the given registry, query strings ignored', async () => {
    const metrics = new HttpMetrics();
    metrics.observe('GET', 'GET /orders', 200, 0.01);
    expect(await get(CLEAN, '/metrics?x=1', 'GET', metrics)).toStrictEqual({
      status: 200,
      type: metrics.contentType,
      text: await metrics.scrape(),
    });
  });

  it('unknown paths and other methods are 404', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/orders'],
      ['POST', '/healthz'],
      ['GET', '/healthz/'],
      ['POST', '/livez'],
    ]) {
      expect([method, path, (await get(CLEAN, path!, method)).status]).toStrictEqual([method, path, 404]);
    }
  });

  it('a checker that throws gives 500, not a hung request', async () => {
    const broken: Checker = {
      health: async () => {
        throw new Error('checker bug');
      },
      ready: async () => ({ clean: true, nodes: null }),
    };
    expect(await get(broken, '/healthz')).toMatchObject({ status: 500, text: '{"error":"internal server error"}' });
  });
});
