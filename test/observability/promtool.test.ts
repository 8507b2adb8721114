import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseScrape } from '../../conformance/cases/observability.ts';
import { grpcDriver } from '../../conformance/drivers/grpc.ts';
import { realBackendsConfigured, startInProcess } from '../support/in-process-app.ts';
import { transportNamed } from '../support/transports.ts';

const PROMTOOL = process.env['PROMTOOL_PATH'] ?? 'promtool';
const hasPromtool = spawnSync(PROMTOOL, ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * Rule METRICS-service: the scrape operators get after REST and gRPC traffic passes
 * `promtool check metrics` (Debian's prometheus package; .ci/run installs it), on real backends when
 * they are configured so the pool and connection families are in it too.
 */
describe.skipIf(!hasPromtool)('promtool check metrics on a live scrape', () => {
  it('is clean after REST and gRPC traffic, and every family moved with that traffic', async () => {
    const real = realBackendsConfigured();
    const app = await startInProcess({ transport: transportNamed('grpc').factory, backend: real ? 'real' : 'fake' });
    const client = grpcDriver({ baseUrl: app.baseUrl, adminUrl: undefined, hooks: undefined });
    try {
      const auth = `Bearer ${await app.login('promtool')}`;
      expect((await fetch(`${app.baseUrl}/orders`, { headers: { authorization: auth } })).status).toBe(200);
      expect((await client.listOrders(auth, {})).codeName).toBe('OK');
      expect((await client.recent(auth)).codeName).toBe('OK');
      expect((await client.getOrder(auth, crypto.randomUUID())).codeName).toBe('NOT_FOUND');

      const scrape = await (await fetch(`${app.adminUrl}/metrics`)).text();
      const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
      expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
      expect(check.status).toBe(0);

      const samples = parseScrape(scrape);
      const value = (name: string, labels: Record<string, string> = {}): number | undefined =>
        samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
      expect(value('orders_http_requests_total', { route: 'GET /orders', status: '200' })).toBe(1);
      expect(value('grpc_server_handled_total', { grpc_method: 'ListOrders', grpc_code: 'OK' })).toBe(1);
      expect(value('grpc_server_handled_total', { grpc_method: 'GetOrder', grpc_code: 'NotFound' })).toBe(1);
      // Recent held the user's session; answered, it lingers (spec 3.2).
      expect(value('orders_sessions', { state: 'live' })).toBe(0);
      expect(value('orders_sessions', { state: 'lingering' })).toBe(1);
      expect(value('process_resident_memory_bytes')).toBeGreaterThan(0);
      if (real) {
        expect(value('orders_backend_connected', { component: 'cache' })).toBe(1);
        expect(value('orders_backend_connected', { component: 'publisher' })).toBe(1);
        expect(value('orders_db_pool_connections', { state: 'idle' })).toBeGreaterThan(0);
      }
      // Bounded cardinality: no raw id or path became a label value.
      expect(scrape).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    } finally {
      await client.close();
      await app.stop();
    }
  });
});
