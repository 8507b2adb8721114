// The /control routes (control-routes.ts, rules CONTROL-*) on a real admin handler over the fakes: a
// provisioned user is in the credential store, the recorders read what the fakes hold, a fault fires once.
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { MemoryOrderCache } from '../../fakes/memory-cache.ts';
import { MemoryEventBus } from '../../fakes/memory-event-bus.ts';
import { MemoryStore } from '../../fakes/memory-store.ts';
import type { Checker } from '../../src/lifecycle/checker.ts';
import { HttpMetrics } from '../../src/observability/metrics.ts';
import { verifyPassword } from '../../src/service/password-hasher.ts';
import { createAdminHandler } from '../../src/transports/http/admin/admin-handler.ts';
import { NOT_FOUND, send, serve } from '../../test/support/one-request.ts';
import { CONTROL_BODY_LIMIT, controlRoutes } from './control-routes.ts';
import { LogTail } from '../console/log-tail.ts';
import { Control } from './control.ts';

const CLEAN: Checker = { health: async () => ({ clean: true, nodes: null }), ready: async () => ({ clean: true, nodes: null }) };
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const JSON_TYPE = { 'content-type': 'application/json' };

async function start() {
  const store = new MemoryStore();
  const cache = new MemoryOrderCache();
  const bus = new MemoryEventBus({ logger: QUIET });
  const warned: string[] = [];
  const logger = { ...QUIET, warn: (_fields: object, msg: string) => void warned.push(msg) };
  const tracer = trace.getTracer('control-test');
  const port = await serve(createAdminHandler(CLEAN, new HttpMetrics(), controlRoutes(new Control({ store, cache, bus, tracer, logger }))));
  return { store, cache, bus, tracer, port, warned };
}

const order = { id: '0b6a4c1e-6f1e-4f7e-9a53-2a4f3c1d9e01', userId: 'u-1', item: 'widget', quantity: 2, status: 'pending' as const };

describe('CONTROL-users, CONTROL-recorders, CONTROL-fault: the test-control routes', () => {
  it('[CONTROL-users] provisions a user the store then holds with a hash of the password, once per name', async () => {
    const { store, port, warned } = await start();
    const body = JSON.stringify({ username: 'carol', password: 'carol-secret' });
    const made = await send(port, 'POST', '/control/users', body, JSON_TYPE);
    expect(made.status).toBe(201);
    const { id, username } = JSON.parse(made.text) as { id: string; username: string };
    const user = await store.findByUsername('carol');
    expect([username, user?.id]).toStrictEqual(['carol', id]);
    expect(await verifyPassword('carol-secret', user!.passwordHash)).toBe(true);
    expect(warned).toStrictEqual(['control: user provisioned']);
    expect(await send(port, 'POST', '/control/users', body, JSON_TYPE)).toMatchObject({
      status: 400,
      text: '{"error":"username carol already exists"}',
    });
    // While the simulator holds the store down, provisioning still works (a case sets up its users first or not).
    store.trouble.down('simulated');
    expect((await send(port, 'POST', '/control/users', '{"username":"dave","password":"p"}', JSON_TYPE)).status).toBe(201);
    for (const bad of ['{"username":"","password":"p"}', '{"username":"x"}', '{"username":"x","password":"p","admin":true}', '[]'])
      expect([bad, (await send(port, 'POST', '/control/users', bad, JSON_TYPE)).status]).toStrictEqual([bad, 400]);
    expect((await send(port, 'POST', '/control/users', '{"username":', JSON_TYPE)).text).toBe('{"error":"malformed request body"}');
    expect(await send(port, 'POST', '/control/users', 'x'.repeat(CONTROL_BODY_LIMIT + 1), JSON_TYPE)).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
    });
  });

  it('[CONTROL-recorders] reads stored rows, live cache entries and published events past the switches', async () => {
    const { store, cache, bus, port } = await start();
    const createdAt = new Date('2026-01-02T03:04:05.000Z');
    await store.insert({ ...order, createdAt });
    await cache.set({ ...order, createdAt });
    store.trouble.down('simulated');
    cache.trouble.down('simulated');
    const wire = { id: order.id, user_id: 'u-1', item: 'widget', quantity: 2, status: 'pending', created_at: createdAt.toISOString() };
    for (const kind of ['orders', 'cache']) {
      const answer = await send(port, 'GET', `/control/${kind}/${order.id}`);
      expect([kind, answer.status, JSON.parse(answer.text)]).toStrictEqual([kind, 200, wire]);
      expect(await send(port, 'GET', `/control/${kind}/${crypto.randomUUID()}`)).toMatchObject(NOT_FOUND);
      expect(await send(port, 'GET', `/control/${kind}/%E0%A4%A`)).toMatchObject(NOT_FOUND);
    }
    const event = { order_id: order.id, user_id: 'u-1', item: 'widget', quantity: 2, created_at: createdAt.toISOString() };
    await bus.publishOrderPlaced({ id: 'e-1', event });
    await bus.publishOrderPlaced({ id: 'e-2', event: { ...event, order_id: 'other', user_id: 'u-2' } });
    const events = async (query: string) => JSON.parse((await send(port, 'GET', `/control/events${query}`)).text) as { events: unknown[] };
    expect((await events('')).events).toHaveLength(2);
    expect(await events(`?order_id=${order.id}`)).toStrictEqual({ events: [event] });
    expect((await events('?user_id=u-2')).events).toHaveLength(1);
  });

  it('[CONTROL-fault] a fault fires on the next call only, as a programming error', async () => {
    const { store, tracer, port, warned } = await start();
    await store.insert({ ...order, createdAt: new Date() });
    expect(await send(port, 'POST', '/control/faults', '{"call":"dropTable"}', JSON_TYPE)).toMatchObject({ status: 400 });
    const armed = await send(port, 'POST', '/control/faults', '{"call":"findById"}', JSON_TYPE);
    expect([armed.status, JSON.parse(armed.text)]).toStrictEqual([200, { call: 'findById', armed: true }]);
    expect(warned).toStrictEqual(['control: fault armed']);
    expect(await send(port, 'POST', '/control/faults', '{"call":"findById"}', JSON_TYPE)).toMatchObject({ status: 200 });
    expect(JSON.parse((await send(port, 'GET', '/control/faults')).text)).toStrictEqual({ armed: ['findById'] });
    expect(() => store.findById(order.id)).toThrow(TypeError);
    expect((await store.findById(order.id))?.id).toBe(order.id);
    expect(JSON.parse((await send(port, 'GET', '/control/faults')).text)).toStrictEqual({ armed: [] });
    // The tracing layer's startSpan: once, then the tracer's own again.
    await send(port, 'POST', '/control/faults', '{"call":"startSpan"}', JSON_TYPE);
    expect(() => tracer.startSpan('request')).toThrow(TypeError);
    expect(tracer.startSpan('request').spanContext()).toBeDefined();
  });

  it('[CONTROL-logs] serves the teed log after a seq, and 404 when nothing is teed', async () => {
    const { port } = await start();
    expect(await send(port, 'GET', '/control/logs')).toMatchObject(NOT_FOUND);
    const log = new LogTail({ lines: 3 });
    const QUIET_BUS = new MemoryEventBus({ logger: QUIET });
    const control = new Control({
      store: new MemoryStore(),
      cache: new MemoryOrderCache(),
      bus: QUIET_BUS,
      tracer: trace.getTracer('t'),
      logger: QUIET,
      log,
    });
    const teed = await serve(createAdminHandler(CLEAN, new HttpMetrics(), controlRoutes(control)));
    for (const n of [1, 2, 3, 4]) log.record(`{"n":${n}}\n`);
    const read = async (query: string) => JSON.parse((await send(teed, 'GET', `/control/logs${query}`)).text) as unknown;
    // The oldest line fell out of the three kept.
    expect(await read('')).toStrictEqual({ lines: ['{"n":2}', '{"n":3}', '{"n":4}'], next: 4 });
    expect(await read('?after=3')).toStrictEqual({ lines: ['{"n":4}'], next: 4 });
    expect(await read('?after=4')).toStrictEqual({ lines: [], next: 4 });
    expect((await send(teed, 'GET', '/control/logs?after=-1')).status).toBe(400);
  });

  it('serves its OpenAPI document and leaves other paths to the admin listener', async () => {
    const { port } = await start();
    const doc = await send(port, 'GET', '/control/openapi.yaml');
    expect([doc.status, doc.headers['content-type']]).toStrictEqual([200, 'application/yaml']);
    for (const path of [
      '/control/users',
      '/control/events',
      '/control/orders/{id}',
      '/control/cache/{id}',
      '/control/faults',
      '/control/logs',
    ])
      expect(doc.text).toContain(`  ${path}:`);
    for (const [method, path] of [
      ['GET', '/control/users'],
      ['GET', '/control'],
      ['GET', '/control/orders/a/b'],
      ['DELETE', '/control/faults'],
    ] as const)
      expect([method, path, await send(port, method, path)]).toMatchObject([method, path, NOT_FOUND]);
  });
});
