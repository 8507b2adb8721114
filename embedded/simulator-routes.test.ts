// The /simulator routes (simulator-routes.ts, rules SIM-*) on a real admin handler: JSON answers, the error
// table's refusals, which paths are theirs, and that an unexpected failure goes through.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Trouble } from '../fakes/trouble.ts';
import { NOT_FOUND, send, serve } from '../test/support/one-request.ts';
import type { Checker } from '../src/lifecycle/checker.ts';
import { HttpMetrics } from '../src/observability/metrics.ts';
import { createAdminHandler } from '../src/transports/http/admin/admin-handler.ts';
import { SimulatedTime } from './simulated-time.ts';
import { SIMULATOR_BODY_LIMIT, simulatorRoutes } from './simulator-routes.ts';
import { Simulator } from './simulator.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function simulator(): Simulator {
  return new Simulator({
    components: [{ name: 'database', trouble: new Trouble('database') }],
    time: new SimulatedTime({ base: () => 0, realTimers: false }),
    logger: QUIET,
  });
}

/** The admin listener's handler with the simulator's routes, as the embedded ring adds them. */
const adminWith = (sim: Simulator) => createAdminHandler(CLEAN, new HttpMetrics(), simulatorRoutes(sim));

describe('SIM-embedded-only, SIM-component-settings: the simulator routes', () => {
  it('answer JSON, and an unreadable body is the error table`s 400', async () => {
    const port = await serve(adminWith(simulator()));
    const state = await send(port, 'GET', '/simulator');
    expect(state).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(state.text)).toMatchObject({ components: [{ name: 'database', state: 'up' }] });
    const json = { 'content-type': 'application/json' };
    expect(await send(port, 'PUT', '/simulator/components/database', '{"state":', json)).toMatchObject({
      status: 400,
      headers: { 'content-type': 'application/json' },
      text: '{"error":"malformed request body"}',
    });
    // A validation refusal keeps the connection; a body over the limit closes it (the rest goes unread).
    expect((await send(port, 'PUT', '/simulator/components/database', '{}', json)).headers['connection']).not.toBe('close');
    expect(await send(port, 'PUT', '/simulator/components/database', 'x'.repeat(SIMULATOR_BODY_LIMIT + 1), json)).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
    });
  });

  it('a component is the last path segment after /simulator/components/ and nothing else', async () => {
    const port = await serve(adminWith(simulator()));
    const down = '{"state":"down"}';
    for (const path of ['/simulator/simulator/components/database', '/simulator/components/database/x'])
      expect([path, await send(port, 'PUT', path, down)]).toMatchObject([path, NOT_FOUND]);
    expect(await send(port, 'PUT', '/simulator/components/database', down)).toMatchObject({ status: 200 });
  });

  it('say which paths they answered, and let an unexpected failure through', async () => {
    const answered: [string, boolean][] = [];
    const routes = simulatorRoutes(simulator());
    const port = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://admin');
      void routes(req, res, url).then((own) => {
        answered.push([`${req.method} ${url.pathname}`, own]);
        if (!own) res.writeHead(404).end();
      });
    });
    await send(port, 'GET', '/simulator');
    await send(port, 'POST', '/simulator/reset');
    await send(port, 'GET', '/simulator/unknown');
    await send(port, 'GET', '/console/');
    expect(answered).toStrictEqual([
      ['GET /simulator', true],
      ['POST /simulator/reset', true],
      ['GET /simulator/unknown', false],
      ['GET /console/', false],
    ]);
    const broken = {
      state: () => {
        throw new Error('simulator bug');
      },
    } as unknown as Simulator;
    const fakeRes = { setHeader: () => undefined, writeHead: () => fakeRes, end: () => fakeRes } as unknown as ServerResponse;
    const request = { method: 'GET' } as IncomingMessage;
    await expect(simulatorRoutes(broken)(request, fakeRes, new URL('http://admin/simulator'))).rejects.toThrow('simulator bug');
  });
});
