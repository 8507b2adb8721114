// The embedded simulator driven from outside: `orders-grpc --embedded` (its main, runMainInProcess) whose
// faults and clock are moved through `orders-admin simulate` (the CLI) over its admin listener, and the
// validation of the admin listener's /simulator routes. failNext, latency, the log lines, linger and
// token expiry on the simulated clock, and no /simulator without --embedded or on the public listener
// are conformance/cases/simulator.ts, run in-process and against a spawned --embedded executable.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin-cli.ts';
import { SIMULATE } from '../../embedded/simulate-cli.ts';
import { MAX_ADVANCE_MS, MAX_FAIL_NEXT, MAX_LATENCY_MS } from '../../embedded/simulator.ts';
import { SIMULATOR_BODY_LIMIT } from '../../embedded/simulator-routes.ts';
import { until } from '../support/eventually.ts';
import { runMainInProcess, type MainRun } from '../support/main-in-process.ts';
import { transportNamed } from '../support/transports.ts';

async function call(
  url: string,
  method: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

describe('simulator of orders-grpc --embedded', () => {
  let bin: MainRun;
  let api: string;
  let admin: string;
  const simulate = async (...args: string[]): Promise<Record<string, unknown>> => {
    let out = '';
    let err = '';
    const io = {
      env: { ADMIN_ADDR: new URL(admin).host },
      stdin: Readable.from([]),
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    };
    const code = await runAdminCli(['simulate', ...args], io, [SIMULATE]);
    expect({ code, err }, `orders-admin simulate ${args.join(' ')}`).toEqual({ code: 0, err: '' });
    return JSON.parse(out) as Record<string, unknown>;
  };

  beforeAll(async () => {
    bin = runMainInProcess(transportNamed('grpc'), ['--embedded'], {
      HTTP_ADDR: '127.0.0.1:0',
      ADMIN_ADDR: '127.0.0.1:0',
      JWT_EXPIRY: '10m',
      LOG_LEVEL: 'info',
    });
    const address = async (msg: string): Promise<string> => `http://${String((await bin.line((l) => l['msg'] === msg, msg))['addr'])}`;
    [api, admin] = [await address('api: listening'), await address('admin: listening')];
    await until(async () => (await fetch(`${admin}/readyz`)).status === 200, 'the admin listener ready');
  });
  afterAll(async () => {
    bin?.signal('SIGTERM');
    await bin?.code;
  });

  // What each change does to the service (reads served with the cache down, linger closing a session on the
  // simulated clock) is conformance/cases/simulator.ts and orders.ts; here, that the CLI's requests land.
  it('down and up move /healthz; advance expires a token on the simulated clock; fail, slow, reset answer the new state', async () => {
    const login = await call(`${api}/auth/login`, 'POST', { username: 'alice', password: 'alice-password' });
    const token = String(login.body['token']);
    const id = String((await call(`${api}/orders`, 'POST', { item: 'widget', quantity: 3 }, token)).body['id']);

    expect(await simulate('down', 'cache')).toEqual({ name: 'cache', state: 'down', latencyMs: 0, failNext: 0 });
    const health = await call(`${admin}/healthz`, 'GET');
    expect(health.status).toBe(503);
    expect(health.body['nodes']).toContainEqual({ name: 'cache', status: 'unavailable', error: expect.stringContaining('cache') });
    expect(await simulate('up', 'cache')).toEqual({ name: 'cache', state: 'up', latencyMs: 0, failNext: 0 });
    expect((await call(`${admin}/healthz`, 'GET')).status).toBe(200);

    // JWT_EXPIRY is 10m: 11m later the token issued at the start has expired.
    expect((await call(`${api}/orders/${id}`, 'GET', undefined, token)).status).toBe(200);
    expect(await simulate('advance', '11m')).toMatchObject({ offsetMs: 660_000 });
    expect(await call(`${api}/orders/${id}`, 'GET', undefined, token)).toEqual({
      status: 401,
      body: { error: 'invalid or expired token' },
    });

    expect(await simulate('fail', 'database', '2')).toEqual({ name: 'database', state: 'up', latencyMs: 0, failNext: 2 });
    expect(await simulate('slow', 'publisher', '5')).toEqual({ name: 'publisher', state: 'up', latencyMs: 5, failNext: 0 });
    const reset = await simulate('reset');
    expect(reset).toMatchObject({ clock: { offsetMs: 0 } });
    expect((reset['components'] as unknown[]).map((c) => JSON.stringify(c))).toEqual(
      ['database', 'cache', 'publisher'].map((name) => JSON.stringify({ name, state: 'up', latencyMs: 0, failNext: 0 })),
    );
    // Lines may be written after the answer: wait for each.
    for (const msg of ['simulator: component changed', 'simulator: clock advanced', 'simulator: reset'])
      expect(await bin.line((l) => l['msg'] === msg, msg)).toMatchObject({ level: 'warn' });
  });

  it.each([
    ['PUT', '/simulator/components/nope', { state: 'down' }, 404, 'not found'],
    ['PUT', '/simulator/components/cache', { state: 'sideways' }, 400, 'state must be up or down'],
    ['PUT', '/simulator/components/cache', {}, 400, 'give at least one of state, latencyMs, failNext'],
    [
      'PUT',
      '/simulator/components/cache',
      { state: 'down', color: 'red' },
      400,
      'unknown field color; allowed: state, latencyMs, failNext',
    ],
    [
      'PUT',
      '/simulator/components/cache',
      { latencyMs: MAX_LATENCY_MS + 1 },
      400,
      `latencyMs must be an integer from 0 to ${MAX_LATENCY_MS}`,
    ],
    ['PUT', '/simulator/components/cache', { failNext: -1 }, 400, `failNext must be an integer from 0 to ${MAX_FAIL_NEXT}`],
    ['PUT', '/simulator/components/cache', '{"state":', 400, 'malformed request body'],
    ['PUT', '/simulator/components/cache', [], 400, 'body must be a JSON object'],
    ['POST', '/simulator/clock/advance', { ms: 0 }, 400, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['POST', '/simulator/clock/advance', { ms: MAX_ADVANCE_MS + 1 }, 400, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['POST', '/simulator/clock/advance', { ms: 1.5 }, 400, `ms must be an integer from 1 to ${MAX_ADVANCE_MS}`],
    ['POST', '/simulator/clock/advance', { ms: 'x'.repeat(SIMULATOR_BODY_LIMIT) }, 413, 'request body too large'],
    ['GET', '/simulator/clock', undefined, 404, 'not found'],
  ] as const)('%s %s %j: %i %s, nothing changed', async (method, path, body, status, error) => {
    expect(await call(`${admin}${path}`, method, body)).toEqual({ status, body: { error } });
    expect((await call(`${admin}/simulator`, 'GET')).body).toMatchObject({
      clock: { offsetMs: 0 },
      components: expect.not.arrayContaining([expect.objectContaining({ state: 'down' })]),
    });
  });
});
