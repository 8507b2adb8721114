import { describe, expect, it } from 'vitest';
import { NOT_FOUND, send, serve } from '../../../../test/support/one-request.ts';
import type { Checker } from '../../../lifecycle/checker.ts';
import { HttpMetrics } from '../../../observability/metrics.ts';
import { createAdminHandler, type AdminRoutes } from './admin-handler.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };

describe('admin listener routing (spec 4.2)', () => {
  it('[ADMIN-healthz] an absolute-form target is routed by its path, an origin-form `//` one stays a path', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics()));
    expect(await send(port, 'GET', 'http://admin.example/healthz')).toMatchObject({ status: 200, text: '{"clean":true,"nodes":null}' });
    expect(await send(port, 'GET', '//healthz')).toMatchObject(NOT_FOUND);
  });

  it('[SIM-embedded-only, CONSOLE-page] without added routes, /simulator and /console paths are the JSON 404', async () => {
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics()));
    for (const path of ['/simulator', '/console/', '/console/state', '/nowhere'])
      expect([path, await send(port, 'GET', path)]).toMatchObject([path, NOT_FOUND]);
  });

  it('[SIM-embedded-only] added routes see the request and its parsed URL after the own routes; what they decline is the 404', async () => {
    const seen: string[] = [];
    const added: AdminRoutes = async (req, res, url) => {
      seen.push(`${req.method} ${url.pathname} ${url.searchParams.get('q')}`);
      if (url.pathname !== '/added') return false;
      res.writeHead(204).end();
      return true;
    };
    const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), added));
    expect(await send(port, 'GET', '/added?q=1')).toMatchObject({ status: 204 });
    expect(await send(port, 'POST', 'http://admin.example/other')).toMatchObject(NOT_FOUND);
    expect(await send(port, 'GET', '/livez')).toMatchObject({ status: 200 });
    expect(seen).toEqual(['GET /added 1', 'POST /other null']);
  });

  it('an added route that fails is the JSON 500', async () => {
    const port = await serve(
      createAdminHandler(CLEAN, new HttpMetrics(), async () => {
        throw new Error('route bug');
      }),
    );
    expect(await send(port, 'GET', '/anything')).toMatchObject({ status: 500, text: '{"error":"internal server error"}' });
  });

  it('a failure after the status line went out still ends the answer with the Error body', async () => {
    const metrics = {
      contentType: 'text/plain',
      scrape: async () => {
        throw new Error('registry bug');
      },
    } as unknown as HttpMetrics;
    const port = await serve(createAdminHandler(CLEAN, metrics));
    expect(await send(port, 'GET', '/metrics')).toMatchObject({ status: 200, text: '{"error":"internal server error"}' });
  });

  it('a failure before any header is a JSON 500', async () => {
    const broken: Checker = {
      health: async () => {
        throw new Error('checker bug');
      },
      ready: CLEAN.ready,
    };
    const port = await serve(createAdminHandler(broken, new HttpMetrics()));
    expect(await send(port, 'GET', '/healthz')).toMatchObject({
      status: 500,
      headers: { 'content-type': 'application/json' },
      text: '{"error":"internal server error"}',
    });
  });
});
