import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpMetrics } from '../observability/metrics.ts';
import { createAdminHandler } from '../transports/http/admin-handler.ts';
import { ComponentChecker, type Checker } from './checker.ts';

async function get(checker: Checker, path: string): Promise<{ status: number; type: string; text: string }> {
  const server = createServer(createAdminHandler(checker, new HttpMetrics())).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const reply = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return { status: reply.status, type: reply.headers.get('content-type') ?? '', text: await reply.text() };
  } finally {
    server.close();
  }
}

describe('admin routes over any checker (spec 2.3, 4.2)', () => {
  it('[ADMIN-checker, ADMIN-readyz-null, HEALTH-nodes-null, ADMIN-healthz, ADMIN-readyz] serve the checker report as is', async () => {
    const none = new ComponentChecker([{ name: 'plain' }]);
    for (const path of ['/readyz', '/healthz']) expect(await get(none, path)).toMatchObject({ status: 200, text: '{"clean":true,"nodes":null}' });
    const stub: Checker = {
      health: async () => ({ clean: false, nodes: [{ name: 'stub', status: 'unavailable', error: 'stub down' }] }),
      ready: async () => ({ clean: false, nodes: [{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }] }),
    };
    for (const [path, report] of [['/healthz', await stub.health()], ['/readyz', await stub.ready()]] as const) {
      const reply = await get(stub, path);
      expect(reply.status).toBe(503);
      expect(reply.type).toMatch(/^application\/json/);
      expect(JSON.parse(reply.text)).toEqual(report);
    }
  });
});
