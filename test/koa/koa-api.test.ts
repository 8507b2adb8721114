import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTECTED_ROUTES, toColonPattern } from '../../src/transports/http/routes.ts';
import { koaTransport } from '../../src/transports/koa/koa-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { call, login } from './koa-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('orders-koa REST API (spec 4.1, 7)', () => {
  let app: InProcessApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    app = await startInProcess({ transport: koaTransport, serviceName: 'orders-koa' });
    alice = await login(app.baseUrl, 'alice', await app.addUser('alice'));
    bob = await login(app.baseUrl, 'bob', await app.addUser('bob'));
  });
  afterAll(() => app.stop());

  it('walks through login, create, get, list and recent', async () => {
    const created = await call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ item: 'book', quantity: 2 }) });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json');
    const order = created.body as Record<string, unknown>;
    expect(Object.keys(order).sort()).toEqual(['created_at', 'id', 'item', 'quantity', 'status']);
    expect(order).toMatchObject({ item: 'book', quantity: 2, status: 'pending' });
    expect(order['id']).toMatch(UUID);
    expect(order['created_at']).toMatch(RFC3339);

    const second = await call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ item: 'pen', quantity: 1 }) });
    const secondId = (second.body as { id: string }).id;

    const fetched = await call(app.baseUrl, 'GET', `/orders/${String(order['id'])}`, { token: alice });
    expect(fetched).toMatchObject({ status: 200, body: order });

    const listed = await call(app.baseUrl, 'GET', '/orders?limit=1&offset=0', { token: alice });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ orders: [second.body] });
    const all = await call(app.baseUrl, 'GET', '/orders?limit=abc&offset=-3', { token: alice });
    expect((all.body as { orders: { id: string }[] }).orders.map((o) => o.id)).toEqual([secondId, order['id']]);

    await call(app.baseUrl, 'GET', `/orders/${secondId}`, { token: alice });
    await call(app.baseUrl, 'GET', `/orders/${String(order['id'])}`, { token: alice });
    const recent = await call(app.baseUrl, 'GET', '/me/recent', { token: alice });
    expect(recent).toMatchObject({ status: 200, body: { recent: [order['id'], secondId] } });

    const empty = await call(app.baseUrl, 'GET', '/orders', { token: bob });
    expect(empty.body).toEqual({ orders: [] });
  });

  it('answers every error of spec 7 with its message', async () => {
    const created = await call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ item: 'lamp', quantity: 1 }) });
    const id = (created.body as { id: string }).id;
    const cases: [string, Promise<Awaited<ReturnType<typeof call>>>, number, string][] = [
      ['malformed create', call(app.baseUrl, 'POST', '/orders', { token: alice, body: '{"item":' }), 400, 'malformed request body'],
      ['wrong JSON type', call(app.baseUrl, 'POST', '/orders', { token: alice, body: '{"item":"x","quantity":"2"}' }), 400, 'malformed request body'],
      ['malformed login', call(app.baseUrl, 'POST', '/auth/login', { body: 'not json' }), 400, 'malformed request body'],
      ['quantity', call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ item: 'x', quantity: 0 }) }), 400, 'quantity must be a positive integer'],
      ['item', call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ quantity: 1 }) }), 400, 'item is required'],
      ['order id', call(app.baseUrl, 'GET', '/orders/not-a-uuid', { token: alice }), 400, 'invalid order id'],
      ['no header', call(app.baseUrl, 'GET', '/orders'), 401, 'missing or malformed Authorization header'],
      ['lower-case bearer', call(app.baseUrl, 'GET', '/orders', { headers: { authorization: `bearer ${alice}` } }), 401, 'missing or malformed Authorization header'],
      ['empty token', call(app.baseUrl, 'GET', '/orders', { headers: { authorization: 'Bearer ' } }), 401, 'missing or malformed Authorization header'],
      ['bad token', call(app.baseUrl, 'GET', '/orders', { token: 'not.a.token' }), 401, 'invalid or expired token'],
      ['credentials', call(app.baseUrl, 'POST', '/auth/login', { body: JSON.stringify({ username: 'alice', password: 'wrong' }) }), 401, 'invalid credentials'],
      ['unknown user', call(app.baseUrl, 'POST', '/auth/login', { body: JSON.stringify({ username: 'nobody', password: 'x' }) }), 401, 'invalid credentials'],
      ['other user', call(app.baseUrl, 'GET', `/orders/${id}`, { token: bob }), 403, 'forbidden'],
      ['no such order', call(app.baseUrl, 'GET', `/orders/${crypto.randomUUID()}`, { token: alice }), 404, 'not found'],
      ['unknown path', call(app.baseUrl, 'GET', '/nope'), 404, 'not found'],
      ['trailing slash', call(app.baseUrl, 'GET', '/orders/', { token: alice }), 404, 'not found'],
      ['wrong case', call(app.baseUrl, 'GET', '/ORDERS', { token: alice }), 404, 'not found'],
      ['too large', call(app.baseUrl, 'POST', '/orders', { token: alice, body: JSON.stringify({ item: 'x'.repeat(1024 * 1024), quantity: 1 }) }), 413, 'request body too large'],
    ];
    for (const [name, pending, status, message] of cases) {
      const res = await pending;
      expect({ name, status: res.status, body: res.body, type: res.headers.get('content-type') }).toEqual({
        name,
        status,
        body: { error: message },
        type: 'application/json',
      });
    }
  });

  it('hides the admin routes on the public listener (spec 4.1 rule 2)', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect(await call(app.baseUrl, 'GET', path)).toMatchObject({ status: 404, body: { error: 'not found' } });
    }
  });

  it('answers a wrong method on a known path with 405 and Allow, before authentication', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/orders', 'POST, GET'],
      ['PUT', `/orders/${crypto.randomUUID()}`, 'GET'],
      ['GET', '/auth/login', 'POST'],
      ['OPTIONS', '/me/recent', 'GET'],
      ['PATCH', '/openapi.yaml', 'GET'],
    ] as const) {
      const res = await call(app.baseUrl, method, path);
      expect({ method, path, status: res.status, body: res.body, allow: res.headers.get('allow') }).toEqual({
        method,
        path,
        status: 405,
        body: { error: 'method not allowed' },
        allow,
      });
    }
    // @koa/router would run the GET handler for HEAD; orders-stdlib answers 405, so do we.
    const head = await fetch(`${app.baseUrl}/orders`, { method: 'HEAD', headers: { authorization: `Bearer ${alice}` } });
    expect(head.status).toBe(405);
  });

  it('requires authentication on every protected route (spec 4.1 rule 1)', async () => {
    for (const route of PROTECTED_ROUTES) {
      const path = toColonPattern(route.path).replace(':id', crypto.randomUUID());
      const res = await call(app.baseUrl, route.method, path, { body: route.method === 'POST' ? '{}' : undefined });
      expect({ route: route.path, status: res.status, body: res.body }).toEqual({
        route: route.path,
        status: 401,
        body: { error: 'missing or malformed Authorization header' },
      });
    }
  });

  it('rejects an empty username or password before the handler with 400 (spec 2.1, this variant for 4.1 rule 9)', async () => {
    for (const body of ['{"username":"","password":"alice-password"}', '{"username":"alice","password":""}', '{"username":"alice"}', '{}']) {
      const res = await call(app.baseUrl, 'POST', '/auth/login', { body });
      expect({ body, status: res.status, error: res.body }).toEqual({ body, status: 400, error: { error: 'username and password are required' } });
    }
    // The validation step read the body; the handler still gets it (the stream is not read twice).
    expect(await call(app.baseUrl, 'POST', '/auth/login', { body: JSON.stringify({ username: 'alice', password: 'alice-password' }) })).toMatchObject({
      status: 200,
      body: { token: expect.any(String) },
    });
  });

  it('serves the contract documents without authentication', async () => {
    const yaml = await fetch(`${app.baseUrl}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toBe('application/yaml');
    expect(await yaml.text()).toMatch(/^openapi: 3\.1\.0/);
    const page = await fetch(`${app.baseUrl}/swagger/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('swagger-ui-bundle.js');
  });
});
